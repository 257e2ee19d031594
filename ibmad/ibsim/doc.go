// Package ibsim is an ibmad.Transport that speaks the socket protocol of
// the upstream ibsim InfiniBand simulator (Debian ibsim-utils), the one
// libumad2sim speaks on behalf of the C tools. It lets the product run
// against a simulated fabric that OpenSM configures and infiniband-diags
// inspect, without LD_PRELOAD: a pure-Go program's syscalls cannot be
// intercepted by libumad2sim.
//
// Attach to a node of a running ibsim as the stock tools under
// libumad2sim would, and run an engine on it:
//
//	o := ibsim.OptionsFromEnv() // IBSIM_SOCKNAME, IBSIM_SERVER_NAME, SIM_HOST
//	o.Node = "H0-0"
//	tr, err := ibsim.Dial(o)
//	if err != nil {
//		return err
//	}
//	e := ibmad.NewEngine(tr, ibmad.Options{})
//	defer e.Close() // closes tr
//
// Set Options.AcceptRequests to serve unsolicited requests (Engine.Handle):
// ibsim delivers them only to the one client per node that asks.
//
// Protocol (docs/protocol.md, "Serving the simulated fabric over ibsim's
// sockets", which describes both sides): a control socket and a data
// socket, both datagram sockets in the abstract Unix
// namespace named from IBSIM_SOCKNAME (default "sim"), or UDP when
// IBSIM_SERVER_NAME is set. Control messages (struct sim_ctl, 80 bytes)
// connect, query node and port data, and disconnect; data messages (struct
// sim_request, 288 bytes) carry one MAD with its LIDs and QPs. ibsim
// serves at most 10 clients, delivers unsolicited requests only to a
// client that connected with the "issm" flag (one per node), rewrites the
// top 16 bits of every request's TID, and returns a request nobody handles
// to its sender with status 110 (ETIMEDOUT).
//
// A received request's length field is passed up as Packet.Len:
// libumad2sim cuts a longer message (OpenSM's RMPP answers) to 256 bytes,
// so a GetTable answer arrives as its first MAD only (docs/protocol.md,
// "SA tables").
//
// When ibsim goes away, Send and Port fail with errors wrapping
// ibmad.ErrDeviceLost; a restarted ibsim does not know the old client, so
// the owner dials again (the exporter does so with backoff). Datagrams that
// are not a whole request, and requests of classes nobody registered
// (answered here with 0x000C, as the kernel would), come back from Recv as
// *ibmad.DropError so that the engine counts them.
package ibsim
