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
// What each file holds:
//   - types.go: Options, the link verdicts, and what a check returns:
//     PathHealth, Link, LinkEnd (a link's key is localize.Link).
//   - checker.go: the Checker: reading both ends of every link, shared
//     across the paths that cross a port for Options.Share.
//   - verdict.go: a link's figures and verdict from its ends, and the
//     path's sums (bottleneck rate, smallest MTU, degraded links).
//   - speed.go: lane speeds and widths, decoded from PortInfo, and parsed
//     from flags and configuration.
//   - counters.go: the PMA reads, the counters' increments since the last
//     reading (resets, saturation) and the limits applied to them.
//   - answer.go: the checks that a PMA's answer is for the attribute and
//     the port asked (ErrMisanswer).
//   - congestion.go: congestion: a link's PortXmitWait as a share of the
//     interval's ticks, the congested verdict, and the per-VL waits
//     (PortVLXmitWaitCounters) read when an end's PortXmitWait rose.
//   - limits.go: counter limits, one CounterName=value or an ibqueryerrors
//     threshold file.
package linkhealth
