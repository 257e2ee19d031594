package main

import "github.com/ibtracer/ibtracer_exporter/ibmad"

// madMeter counts the MADs a run's engine sent from the run's start: every
// request attempt, retries included, and every RMPP ACK of the SA tables
// it received (ibmad.ClassStats; none where the kernel does RMPP). The
// traces count only their own (trace.Result.MADs); the meter also sees
// those sent outside any trace, above all the listing of the CA ports of
// --all (docs/architecture.md, "Facts shared by a run").
type madMeter struct {
	e     *ibmad.Engine
	start int
}

func newMADMeter(e *ibmad.Engine) madMeter { return madMeter{e: e, start: enginesMADs(e)} }

// sent is how many MADs the engine sent since the meter was made.
func (m madMeter) sent() int { return enginesMADs(m.e) - m.start }

func enginesMADs(e *ibmad.Engine) int {
	n := 0
	for _, c := range e.Stats().Classes {
		n += int(c.Requests + c.ACKs)
	}
	return n
}

// runMADs is what --all's totals line says of the MADs a run sent
// (totalsOf): all of them (madMeter), and how many of them the link
// health checks of --health sent, after the traces.
type runMADs struct {
	sent, health int
}
