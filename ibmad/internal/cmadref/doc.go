// Package cmadref wraps libibmad's field codec (mad_decode_field,
// mad_encode_field) for the tests that cross-check ibmad's encoders against
// it. It uses cgo and needs Debian's libibmad-dev; only tests import it, so
// the product binaries stay free of cgo. It builds only with the ibcref
// build tag (make test sets it): go build ./... and go vet ./... need no
// C header.
package cmadref
