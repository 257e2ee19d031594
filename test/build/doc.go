// Package build checks what `make build` produces: static binaries (no cgo)
// that carry the version, revision, branch and build date they were given.
package build
