// Package agent is the ibtracer vendor agent (docs/protocol.md): on
// management class 0x30 (vendor range 2, OUI 0x001405 by default) it
// answers ClassPortInfo, telling tracers the class is supported, and
// SourceRoute, reporting the port a request really arrived on and
// answering status 7 (0x001C) when that differs from the port the tracer
// expected. It also answers ibping (class 0x32) byte-compatibly with
// infiniband-diags' `ibping -S`, so a stock ibping works against every node
// that runs it.
//
// Host it on the engine of the port it answers for; it serves until
// Close, rate-limits each requester (one bucket however it addresses us:
// ibmad.RequesterOf), and counts what it answered and dropped:
//
//	a, err := agent.New(engine, agent.Config{Ping: true})
//	if err != nil {
//		return err // the engine could not register the classes
//	}
//	defer a.Close()
//	st := a.Stats() // requests by attribute and result, drops by reason
package agent
