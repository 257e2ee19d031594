# ibtracer_exporter
GO        ?= go
PKGS      ?= ./...
# The version lives in the VERSION file, and CHANGELOG.md has its section.
VERSION   ?= $(shell cat VERSION 2>/dev/null || echo dev)
REVISION  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
FUZZTIME  ?= 60s
# The cross-checks against libibmad, libibumad and OpenSM's C headers
# (test-only cgo) build only with this tag: go build/vet ./... need no C header.
TESTTAGS  ?= ibcref

.PHONY: all build test test-short lint bench fuzz deps clean run package demo-alerts

all: build test

# Both product binaries, static, without cgo (docs/architecture.md), into BINDIR,
# stamped through prometheus/common/version: --version and the
# ibtracer_build_info metric show VERSION, REVISION, BRANCH and BUILD_DATE.
BINDIR     ?= bin
BRANCH     ?= $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)
BUILD_USER ?= $(shell id -un 2>/dev/null || echo unknown)@$(shell hostname 2>/dev/null || echo unknown)
BUILD_DATE ?= $(shell date -u +%Y%m%d-%H:%M:%S)
VERSION_PKG = github.com/prometheus/common/version
LDFLAGS    ?= -X '$(VERSION_PKG).Version=$(VERSION)' -X '$(VERSION_PKG).Revision=$(REVISION)' \
              -X '$(VERSION_PKG).Branch=$(BRANCH)' -X '$(VERSION_PKG).BuildUser=$(BUILD_USER)' \
              -X '$(VERSION_PKG).BuildDate=$(BUILD_DATE)'

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BINDIR)/ibtracer_exporter .
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BINDIR)/ibtracer ./cmd/ibtracer
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BINDIR)/ibtracer-fabric ./cmd/ibtracer-fabric

# The test command README.md and .ci/run use. The libibmad cross-check
# needs cgo, Debian's libibmad-dev (installed by .ci/run) and the ibcref tag. Every test runs
# under the race detector: the whole suite takes a few minutes.
test: deps
	$(GO) test -tags $(TESTTAGS) -race -count=1 -timeout 30m $(PKGS)

# Under -short no external peer starts: ibsim, OpenSM, infiniband-diags and
# Prometheus tests skip (ibsimtest.Require, promtest.RequireTool).
test-short:
	$(GO) test -tags $(TESTTAGS) -short -count=1 $(PKGS)

# staticcheck, pinned by its module version (release 2025.1.1 is module
# v0.6.1: the module proxy serves only the module version), installed into
# $(GOPATH)/bin. -version prints "staticcheck 2025.1.1 (0.6.1)".
STATICCHECK_VERSION ?= v0.6.1
STATICCHECK ?= $(shell $(GO) env GOPATH)/bin/staticcheck

lint:
	$(GO) vet $(PKGS)
	$(GO) vet -tags $(TESTTAGS) $(PKGS)
	@$(STATICCHECK) -version 2>/dev/null | grep -qF '($(STATICCHECK_VERSION:v%=%))' || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(STATICCHECK) -tags $(TESTTAGS) $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# Runs every fuzz target for FUZZTIME each.
fuzz:
	@for pkg in $$($(GO) list $(PKGS)); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# Installs the Debian packages the tests need if any is missing (a no-op
# when they are there), and the Go modules. The tools module (nfpm) serves
# only make package and test/packages: if it cannot be downloaded, say so
# and go on, so that every other test still runs (test/packages then fails
# and names the module).
deps:
	@bash scripts/deps.sh
	$(GO) mod download
	@cd tools && $(GO) mod download || echo "deps: the tools module (nfpm) did not download: make package and test/packages will fail; every other test runs" >&2

clean:
	rm -rf bin dist

# Packages (docs/packaging.md): a .deb, an .rpm and a release tarball
# ibtracer_exporter-VERSION.linux-ARCH.tar.gz per architecture, into DIST,
# built with nfpm at the version tools/go.mod pins.
DIST       ?= dist
PKG_ARCHS  ?= amd64 arm64 ppc64le
package:
	VERSION='$(VERSION)' REVISION='$(REVISION)' BRANCH='$(BRANCH)' BUILD_USER='$(BUILD_USER)' \
	  BUILD_DATE='$(BUILD_DATE)' GO='$(GO)' bash scripts/package.sh $(DIST) $(PKG_ARCHS)

# The exporter on the built-in simulated fabric: no hardware needed.
# Metrics at http://127.0.0.1:9684/metrics, traces at /traces.
run:
	@echo "ibtracer_exporter on the built-in simulated fabric: metrics at http://127.0.0.1:9684/metrics,"
	@echo "the latest traces at http://127.0.0.1:9684/traces; ibtracer works on the same kind of fabric:"
	@echo "  go run ./cmd/ibtracer --ib.transport=sim --all -v"
	$(GO) run . --ib.transport=sim --sim.agents=hosts:80% --sim.faults --sim.remote-subnet \
	  --sim.multicast=0xc001:H0-0,H1-2,H3-3 \
	  --config.file=examples/demo.yml --web.listen-address=127.0.0.1:9684

# make run's exporter with a Prometheus and an Alertmanager (Debian's
# packages) evaluating the shipped rules and the Alertmanager example:
# watch the alerts fire and resolve. Stops after DEMO_MINUTES (default
# 30); not part of make test.
demo-alerts:
	@bash scripts/demo-alerts.sh

