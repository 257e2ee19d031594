// Package cumadref exposes the kernel's rdma/ib_user_mad.h layouts and
// libibumad's header setters (umad_set_addr, umad_set_grh, umad_set_pkey)
// to the tests that cross-check the pure-Go umad transport. It uses cgo
// and Debian's libibumad-dev and linux-libc-dev; only tests import it, and
// it builds only with the ibcref build tag (make test sets it), so that
// go build ./... and go vet ./... need no C header.
package cumadref
