// Package agent is the ibtracer vendor agent (docs/protocol.md): on management
// class 0x30 (vendor range 2, OUI 0x001405 by default) it answers
// ClassPortInfo, telling tracers the class is supported, and SourceRoute,
// reporting the port a request really arrived on and answering status 7
// (0x001C) when that differs from the port the tracer expected. It also
// answers ibping (class 0x32) byte-compatibly with infiniband-diags'
// `ibping -S`, so a stock ibping works against every node that runs it.
//
// What each file holds:
//   - agent.go: Config, New and Close; the answers (serve, sourceRoute,
//     ping); the per-source rate limit (allow: a golang.org/x/time/rate
//     bucket per source, its GID with a GRH or its LID, on Config.Clock);
//     the counters (Stats).
//   - agent_test.go: the answers and the rate limit on a fake transport
//     and a fake clock; block_test.go: a slow Port of the transport
//     does not block the answers (handlers run on the receive goroutine).
package agent
