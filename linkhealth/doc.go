// Package linkhealth reads the health of the links of a traced path
// (docs/metrics.md, "Link health"): for every link between two hops of a
// trace.Result, both ends' PortInfo (state, width, speed, MTU) and, when
// asked, their PerfMgt error counters, judged against what both ends
// support (iblinkinfo's "Could be"), against expected widths and speeds,
// and against counter limits (ibdiagpath's -P, ibqueryerrors'
// --threshold-file). The exporter (collector) and ibtracer --health use
// it. It imports trace, never the other way: it sends its MADs through a
// trace.Probe and is told the PortInfo the walk reads anyway
// (trace.Tracer.OnPortInfo).
//
// Use: make one Checker per tracer, and check each path the tracer
// returned; the checker shares what it read of a port among the paths
// that cross it for Options.Share:
//
//	h := linkhealth.NewChecker(tracer, linkhealth.Options{
//		Counters: true,                              // read PerfMgt error counters too
//		Limits:   map[string]uint64{"SymbolErrorCounter": 10},
//		Share:    30 * time.Second,
//	})
//	ph := h.Check(ctx, tracer.Trace(ctx, trace.Destination{LID: 17}))
//	for _, l := range ph.Links {
//		fmt.Println(l.Verdict, l.A.Label(), l.B.Label())
//	}
//	bad := ph.Unhealthy() // one line per link that is not ok
package linkhealth
