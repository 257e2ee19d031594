// Package madtest holds what only tests use of ibmad: a scriptable
// ibmad.Transport in one line (New answers every request it is sent with
// a function of the test's choosing, or drops it, and Inject feeds
// arbitrary packets, malformed ones included, to the receiver), and Walk,
// a directed-route-only discovery of a subnet (as ibnetdiscover does) that
// the oracle tests compare with topology files and stock tools. No product
// code imports it.
//
// What each file holds:
//   - madtest.go: Transport (New, Inject, Registrations), Func, the answer
//     the test scripts, and Echo.
//   - discover.go: Walk and Subnet (Node, Link), the directed-route
//     discovery; Get, one SMP Get on a path; PortLIDs, every port's LID.
package madtest
