// Command ibtracer traces the route packets take to InfiniBand
// destinations, hop by hop, and has the vendor agent at every hop that
// runs one confirm the port the packet arrived on (the 2005 OpenIB
// "ibtracer" design).
//
//	ibtracer [-I|-C ca] [-p|-P port] [-r retries] [-t timeout_ms] [-n node-name-map] (-l LID | -g DGID | -G GUID | --node NAME [--port N] | --all) [-v]
//	ibtracer [options] DST_LID
//	ibtracer [options] SRC_LID DST_LID
//	ibtracer [options] --via NODE_GUID:PORT [destinations; default --all]
//
// The positional forms are ibtracert's: a bare destination LID, or a
// source LID and a destination LID, traced from the source's port (the
// walk reaches the source first, as ibtracert's does). A node-name map
// (the OFED format, internal/nodenamemap) gives hops their site names.
//
// Exit status: 0 every destination traced and valid (or its path left
// the subnet at a router: left_subnet), 1 a port mismatch
// (status 7) was found (or, with --health, a link of a traced path is
// unhealthy: the JSON's health.healthy tells them apart), 2 bad usage, 3
// a path over 64 hops, 4 unreachable (no route, link down, timeout), 5 SA
// resolution failed, 6 device or transport error (or the output could not
// be written). With several destinations, a mismatch wins; otherwise
// the highest status.
//
// Examples, on a fabric or on the simulated one (--ib.transport=sim):
//
//	ibtracer -l 12 -v                  # the path to LID 12, hop by hop, with each hop's verdict
//	ibtracer 4 12                      # ibtracert's form: from LID 4's port to LID 12
//	ibtracer -G 0x0002c90300a1b2c3     # a port GUID, resolved through the SA
//	ibtracer --all --format=json       # every CA port the SA knows, as a JSON array
//	ibtracer --lmc-all -l 12           # every LID of the port: its distinct paths
//	ibtracer -m 0xc001 12              # the multicast path of MLID 0xc001 to LID 12
//	ibtracer --via 0x0002c90300a1b2c3:3  # which destinations cross that link
//	ibtracer -l 12 --health            # the path's links judged by their counters
//
// --validate says who confirms each hop's ingress port (auto, agent,
// sma, off) and --discovery how the path is learnt (smp, sa, auto);
// ibtracer --help lists every flag, and docs/cli.md explains them.
package main
