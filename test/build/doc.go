// Package build checks the build and the layout: `make build` produces
// static binaries (no cgo) that carry the version, revision, branch and
// build date they were given; and the module keeps the layout limits of
// docs/architecture.md, "Layout limits" (files per package, the
// files of one type's methods, lines per file, cyclomatic complexity,
// the Exporter's methods, README on one page).
//
//	go test ./test/build/
package build
