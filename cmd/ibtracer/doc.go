// Command ibtracer traces the route packets take to InfiniBand
// destinations, hop by hop, and has the vendor agent at every hop that
// runs one confirm the port the packet arrived on (the 2005 OpenIB
// "ibtracer" design).
//
//	ibtracer [-I|-C ca] [-p|-P port] [-r retries] [-t timeout_ms] [-n node-name-map] (-l LID | -g DGID | -G GUID | --node NAME [--port N] | --all) [-v]
//	ibtracer [options] DST_LID
//	ibtracer [options] SRC_LID DST_LID
//
// The positional forms are ibtracert's: a bare destination LID, or a
// source LID and a destination LID, traced from the source's port (the
// walk reaches the source first, as ibtracert's does). A node-name map
// (the OFED format, internal/nodenamemap) gives hops their site names.
//
// Exit status: 0 every destination traced and valid, 1 a port mismatch
// (status 7) was found (or, with --health, a link of a traced path is
// unhealthy: the JSON's health.healthy tells them apart), 2 bad usage, 3 a path over 64 hops, 4 unreachable
// (no route, link down, timeout), 5 SA resolution failed, 6 device or
// transport error. With several destinations, a mismatch wins; otherwise
// the highest status.
//
// What each file holds:
//   - main.go: the flags, the destinations they name, the run.
//   - all.go: --all: skipping the source, progress, the totals line
//     (with the MADs sent and the facts shared).
//   - each.go: running traces concurrently (--concurrency), naming hops.
//   - output.go: printing a run as text, -v or JSON.
//   - lmc.go: --lmc-all.
//   - health.go: --health and its flags.
//   - exitcode.go: the exit statuses.
//   - version.go: --version.
//   - tty_linux.go, tty_other.go: whether stderr is a terminal.
package main
