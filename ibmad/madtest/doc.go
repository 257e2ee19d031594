// Package madtest holds what only tests use of ibmad: a scriptable
// ibmad.Transport in one line (New answers every request it is sent with
// a function of the test's choosing, or drops it, and Inject feeds
// arbitrary packets, malformed ones included, to the receiver), and Walk,
// a directed-route-only discovery of a subnet (as ibnetdiscover does) that
// the oracle tests compare with topology files and stock tools. No product
// code imports it.
package madtest
