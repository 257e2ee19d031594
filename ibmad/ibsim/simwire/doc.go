// Package simwire holds the sizes, offsets and message types of ibsim's
// socket protocol (its x86_64 layout, docs/protocol.md), shared by the
// client (ibmad/ibsim) and the server of the built-in fabric
// (ibmad/sim/simserve). Each side is checked against an independent peer:
// the client against the real ibsim, the server against the stock
// infiniband-diags under libumad2sim (docs/protocol.md, "Serving the
// simulated fabric over ibsim's sockets").
package simwire
