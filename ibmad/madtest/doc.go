// Package madtest holds what only tests use of ibmad: a scriptable
// ibmad.Transport in one line (New answers every request it is sent with
// a function of the test's choosing, or drops it, and Inject feeds
// arbitrary packets, malformed ones included, to the receiver), and Walk,
// a directed-route-only discovery of a subnet (as ibnetdiscover does) that
// the oracle tests compare with topology files and stock tools. No product
// code imports it.
//
// A test scripts the fabric in a function of the packet sent, and runs
// the code under test on an engine over it:
//
//	tr := madtest.New(madtest.Echo) // every request answered with itself
//	e := ibmad.NewEngine(tr, ibmad.Options{})
//	defer e.Close()
//
// Transport.Inject delivers a packet as if it had arrived (a request for
// a handler, a forged answer); Transport.Sent counts what was sent.
package madtest
