// Command ibtracer-fabric serves a simulated InfiniBand fabric (the one
// --ib.transport=sim builds in process) to other processes over the
// socket protocol of the ibsim simulator: run ibtracer or
// ibtracer_exporter with --ib.transport=ibsim and the same
// IBSIM_SOCKNAME, or the stock infiniband-diags under libumad2sim. The
// fabric then lives in a process of its own, so that the client's
// memory and CPU are its own (scripts/bench-exporter.sh;
// docs/architecture.md).
//
// The vendor agent runs, in this process, on the nodes --sim.agents
// selects, except --sim.node: that node is left to the client that
// attaches there without naming a node, which may host its own agent.
// Only abstract Unix sockets are served (no UDP). It runs until SIGTERM
// or SIGINT.
//
// The command is one file:
//   - main.go: run, the flags (the shared --sim.* ones and the socket
//     name), the fabric served until a signal, and writeHeapProfile.
package main
