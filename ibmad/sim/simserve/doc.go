// Package simserve serves a simulated fabric (package sim) over the socket
// protocol of the upstream ibsim simulator, so that another process can
// reach it the way it reaches ibsim: the product with --ib.transport=ibsim
// (package ibsim), and the stock C tools under libumad2sim
// (docs/protocol.md, "Serving the simulated fabric over ibsim's sockets").
//
// Listen binds the control socket @NAME:ctl in the abstract Unix
// namespace and Serve answers it until Close:
//
//	s, err := simserve.Listen(f, simserve.Options{SockName: "sim"})
//	go s.Serve()
//	defer s.Close()
//
// A client (ibsim.Dial in Go, or a stock tool under libumad2sim with
// IBSIM_SOCKNAME=sim and SIM_HOST=node) is attached to the node it names
// (by name, else by node description) or to the server's default node,
// through a sim.Transport of its own, and gets a data socket @NAME:outID
// connected to its @NAME:inPID; MADs are forwarded both ways. A client
// that asks to take requests (ibsim's "issm" flag) gets every request
// for its node that the fabric does not answer itself.
//
// Differences from ibsim: the number of clients is not limited (ibsim
// serves 10); the default node is the one the server is given (ibsim
// takes the first node of its file); a request the fabric drops is not
// returned with status 110 at once but left to the sender's own timeout,
// as on a real fabric; a request nobody on the destination node takes
// is answered by the fabric as a kernel would (Get and Set with
// 0x000C), not returned with status 110; a response comes back with the
// TID the client sent, not with the server's client index in its top 16
// bits; SET_ISSM does not change the port's IsSM capability bit; the
// simulated SMA is read-only (no OpenSM: LIDs and routes are the
// fabric's own). Clients that went away without disconnecting are
// detached when a write to them fails or when a new client connects.
package simserve
