package simserve_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim/simserve"
)

// Serve a generated fat tree over ibsim's sockets and reach it as
// another process would, through package ibsim's client: here, ask the
// SMA of the node the client is attached to for its NodeInfo over a
// directed route of no hops.
func Example() {
	topo, err := sim.FatTree2(2, 1, 2, 1)
	if err != nil {
		panic(err)
	}
	f, err := sim.New(topo, sim.Options{})
	if err != nil {
		panic(err)
	}
	s, err := simserve.Listen(f, simserve.Options{SockName: fmt.Sprintf("simserve-example-%d", os.Getpid())})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	go func() { _ = s.Serve() }()

	// In the other process: IBSIM_SOCKNAME and SIM_HOST say the same
	// (ibsim.OptionsFromEnv).
	tr, err := ibsim.Dial(ibsim.Options{SockName: s.SockName(), Node: "H1-0", Timeout: 10 * time.Second})
	if err != nil {
		panic(err)
	}
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 2 * time.Second})
	defer e.Close()
	smp, err := ibmad.NewDRGet(ibmad.AttrNodeInfo, 0, nil)
	if err != nil {
		panic(err)
	}
	req := &ibmad.Request{Addr: ibmad.DRAddress()}
	_ = smp.MarshalTo(req.MAD[:])
	var resp ibmad.Response
	if err := e.Do(context.Background(), req, &resp); err != nil {
		panic(err)
	}
	var ni ibmad.NodeInfo
	_ = ni.UnmarshalBinary(resp.MAD.SMPData())
	fmt.Println(s.DefaultNode(), ni.NodeType, ni.PortGUID == f.Node("H1-0").Ports[1].GUID)
	// Output:
	// H0-0 ca true
}
