// Package e2e holds the end-to-end tests: the built binaries against real
// peers (ibsim, OpenSM, the stock infiniband-diags, a real Prometheus and
// Alertmanager), one harness (harness_test.go) to build, start, scrape and
// wait, and the fault matrix (faults_test.go, flood_test.go). `make test`
// runs them; `go test -short` skips them. See docs/architecture.md.
package e2e
