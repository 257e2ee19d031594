#!/usr/bin/env bash
# Builds the release into DIST: for each architecture a .deb, an .rpm and a
# tarball ibtracer_exporter-VERSION.linux-ARCH.tar.gz (docs/packaging.md).
#   scripts/package.sh DIST ARCH...      (make package runs it)
# VERSION, REVISION, BRANCH, BUILD_USER and BUILD_DATE come from the
# environment (the Makefile's), so every binary carries the same stamp.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 DIST ARCH..." >&2; exit 2; }
dist=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
: "${VERSION:?VERSION is not set (make package sets it from the VERSION file)}"
: "${BUILD_DATE:?BUILD_DATE is not set}"
export VERSION REVISION BRANCH BUILD_USER BUILD_DATE
GO=${GO:-go}
mkdir -p "$dist"
dist=$(cd "$dist" && pwd)
stage=$dist/stage
rm -rf "$stage"
mkdir -p "$stage/man" "$stage/completion" "$dist/tools"

# nfpm, at the version tools/go.mod pins (its checksums in tools/go.sum).
(cd tools && "$GO" build -o "$dist/tools/nfpm" github.com/goreleaser/nfpm/v2/cmd/nfpm)

# The binaries, one directory per architecture (make build: static, stamped).
for arch in "$@"; do
	GOARCH=$arch make --no-print-directory build BINDIR="$stage/$arch" > /dev/null
done

# Man pages and completions come from the CLI definitions: the host's build
# writes them (the one above when the host's architecture is in the list).
host=$stage/$("$GO" env GOARCH)
[ -x "$host/ibtracer_exporter" ] || make --no-print-directory build BINDIR="$host" > /dev/null
for cmd in ibtracer_exporter ibtracer; do
	"$host/$cmd" --help-man | gzip -9n > "$stage/man/$cmd.1.gz"
	"$host/$cmd" --completion-script-bash > "$stage/completion/$cmd.bash"
	"$host/$cmd" --completion-script-zsh > "$stage/completion/_$cmd"
done

# SOURCE_DATE_EPOCH: the packages' and tarballs' file times, the last commit's.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2> /dev/null || date +%s)}
export SOURCE_DATE_EPOCH
for arch in "$@"; do
	for packager in deb rpm; do
		STAGE=$stage ARCH=$arch "$dist/tools/nfpm" package --config packaging/nfpm.yaml \
			--packager "$packager" --target "$dist/" > /dev/null
	done

	name=ibtracer_exporter-$VERSION.linux-$arch
	tree=$stage/tar/$name
	mkdir -p "$tree"
	cp "$stage/$arch/ibtracer_exporter" "$stage/$arch/ibtracer" "$tree/"
	cp LICENSE config.example.yml examples/systemd/ibtracer_exporter.service \
		examples/systemd/ibtracer_exporter.default packaging/91-ibtracer-umad.rules \
		dashboards/ibtracer.shard.rules.yml dashboards/ibtracer.rules.yml dashboards/ibtracer.json "$tree/"
	cp packaging/ibtracer.yml "$tree/ibtracer.yml"
	cp packaging/ibtracer_exporter.sysusers "$tree/ibtracer_exporter.sysusers.conf"
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
		-C "$stage/tar" -czf "$dist/$name.tar.gz" "$name"
done
(cd "$dist" && ls -l ./*.deb ./*.rpm ./*.tar.gz)
