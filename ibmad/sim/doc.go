// Package sim is an in-process simulated InfiniBand fabric for tests,
// benchmarks and the zero-setup demo (design §5).
//
// It reads ibnetdiscover/ibsim topology files (or builds fat trees),
// assigns LIDs, computes min-hop routes that spread destinations over
// parallel links as OpenSM's minhop does, and answers the MADs the tracer
// sends the way real nodes do: directed-route and LID-routed SMPs at every
// node's SMA, SA PathRecord/NodeRecord at the SM node, PerfMgt at every
// port. LID-routed MADs of other classes travel hop by hop through the
// forwarding tables to a Transport attached at the destination node, which
// learns the true ingress port. Faults can be injected: per-port drop rates,
// links going down (optionally followed by a re-route, as an SM sweep
// would), switches whose data plane disagrees with their LFT, LID changes
// and nodes or agents that disappear.
package sim
