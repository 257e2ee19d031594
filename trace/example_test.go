package trace_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// One trace across the built-in simulated fabric: from host H0-0 through
// its leaf and the spine to H1-1, with the vendor agent on every node,
// so that each hop is validated. The exporter and the ibtracer command
// do the same through a umad or ibsim transport.
func ExampleTracer_Trace() {
	topo, _ := sim.FatTree2(2, 1, 2, 1) // leaves L0, L1; spine S0; hosts H<leaf>-<n>
	fabric, _ := sim.New(topo, sim.Options{})
	for _, n := range fabric.Nodes() {
		tr, _ := fabric.Attach(n.Name, 0)
		ae := ibmad.NewEngine(tr, ibmad.Options{})
		defer ae.Close()
		_, _ = agent.New(ae, agent.Config{}) // the agent each node's exporter hosts
	}
	tr, _ := fabric.Attach("H0-0", 0)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: time.Second})
	defer e.Close()

	lid, _ := fabric.LIDOf("H1-1", 0)
	r := trace.New(e, trace.Options{}).Trace(context.Background(), trace.Destination{LID: lid})
	fmt.Println(r.Status, r.PathHops(), "hops")
	for _, h := range r.Hops[1:] {
		fmt.Printf("%s in port %d: %s\n", h.NodeDesc, h.InPort, h.Agent)
	}
	// Output:
	// ok 4 hops
	// L0 in port 1: validated
	// S0 in port 1: validated
	// L1 in port 3: validated
	// H1-1 in port 1: validated
}
