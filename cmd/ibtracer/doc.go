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
// What each file holds:
//   - main.go: the flags and run; the destinations of the command line
//     (one function per form), the translation of the flags to
//     trace.Options, and exitCode over every destination.
//   - exitcode.go: the exit statuses, and resultExit, a trace's status.
//   - output.go: output, what a run prints: JSON, verbose or short;
//     jsonarray.go: writeJSONArray, the JSON array of the traces
//     marshalled item by item on every processor, byte for byte the
//     Encoder's.
//   - each.go: each, the bounded concurrency of the traces, and nameHops,
//     the node-name-map's names given to the hops.
//   - all.go: --all: the local port skipped, the progress line on a
//     terminal and the totals line (with the MADs sent and the facts
//     shared).
//   - mads.go: madMeter, the MADs the run's engine sent (the totals'
//     "MADs: N sent", the CA ports' listing included), and runMADs.
//   - allstream.go: --all's destinations (allDestinations) and traces,
//     each started as soon as the SA names its port (traceAllStreaming,
//     its queue), and traceOne.
//   - allrouted.go: where --all's CA ports come from (traceAllListed):
//     the SA's table, else the LIDs the local switch forwards, traced,
//     and kept when they end at a CA port (traceAllRouted), the SA asked
//     only of the others.
//   - lmc.go: runLMC, --lmc-all: one trace per LID, printed as a path set.
//   - multicast.go: -m MLID [SRC_LID] DST_LID, the multicast trace, its
//     usage checks and its output.
//   - via.go: --via GUID:PORT, the destinations whose path crosses a
//     link (trace.Result.Crosses), and its text and JSON forms.
//   - health.go: the --health flags and their linkhealth.Options, the
//     checks of the traced paths, their exit status and their output.
//   - congestion.go: a link's congestion (xmit wait share, waiting VL)
//     in the -v output.
//   - version.go: version, the --version text.
//   - tty_linux.go, tty_other.go: isTerminal (always false off Linux).
package main
