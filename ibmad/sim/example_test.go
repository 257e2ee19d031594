package sim_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// A switch and two hosts, in the ibnetdiscover/ibsim topology format.
const exampleTopology = `
Switch	4 "sw1"
[1]	"h1"[1]
[2]	"h2"[1]

Hca	1	"h1"
[1]	"sw1"[1]

Hca	1	"h2"
[1]	"sw1"[2]
`

// Build a fabric from a topology, attach a transport at host h1 and ask
// the switch's SMA for its NodeInfo by LID, as a tool on h1 would; then
// break the switch and see the query time out.
func Example() {
	topo, err := sim.ParseTopology("example", strings.NewReader(exampleTopology))
	if err != nil {
		panic(err)
	}
	f, err := sim.New(topo, sim.Options{})
	if err != nil {
		panic(err)
	}
	tr, err := f.Attach("h1", 0)
	if err != nil {
		panic(err)
	}
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 100 * time.Millisecond, NoRetry: true})
	defer e.Close()

	lid, _ := f.LIDOf("sw1", 0)
	nodeInfo := func() (ibmad.NodeInfo, error) {
		req := &ibmad.Request{Addr: ibmad.SMPAddress(lid)}
		_ = ibmad.NewLIDGet(ibmad.AttrNodeInfo, 0).MarshalTo(req.MAD[:])
		var resp ibmad.Response
		var ni ibmad.NodeInfo
		if err := e.Do(context.Background(), req, &resp); err != nil {
			return ni, err
		}
		return ni, ni.UnmarshalBinary(resp.MAD.SMPData())
	}
	ni, err := nodeInfo()
	fmt.Println(lid, ni.NodeType, ni.NumPorts, ni.NodeGUID, ni.LocalPortNum, err)

	_ = f.SetSilent("sw1", true) // a fault: the switch answers nothing
	_, err = nodeInfo()
	fmt.Println(errors.Is(err, ibmad.ErrTimeout))
	// Output:
	// 1 switch 4 0x0000000000200000 1 <nil>
	// true
}
