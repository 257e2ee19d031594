// Package osmref exposes OpenSM's and libibmad's SA constants (component
// mask bits, attribute IDs, status codes) for the tests that check ibmad's
// copies against a source that is not ours. It uses cgo and needs Debian's
// libopensm-dev (iba/ib_types.h) and libibmad-dev (infiniband/mad.h); only
// tests import it, so the product binaries stay free of cgo. It builds
// only with the ibcref build tag (make test sets it): go build ./... and
// go vet ./... need no C header.
package osmref
