package ibmad_test

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// An engine on a port of the built-in simulated fabric sends one
// directed-route SMP, NodeInfo of the node at the far end of port 1 of
// the local host (its leaf switch), and decodes the answer. On hardware
// the transport is umad.Open, under ibsim ibsim.Dial; the engine is the
// same.
func ExampleEngine_Do() {
	topo, _ := sim.FatTree2(2, 1, 2, 1) // leaves L0, L1; spine S0; hosts H<leaf>-<n>
	fabric, _ := sim.New(topo, sim.Options{})
	tr, _ := fabric.Attach("H0-0", 0)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: time.Second})
	defer e.Close()

	var smp ibmad.SMP
	if err := smp.InitDRGet(ibmad.AttrNodeInfo, 0, ibmad.DRPath{1}); err != nil {
		fmt.Println(err)
		return
	}
	req := &ibmad.Request{Addr: ibmad.DRAddress()}
	if err := smp.MarshalTo(req.MAD[:]); err != nil {
		fmt.Println(err)
		return
	}
	var resp ibmad.Response
	if err := e.Do(context.Background(), req, &resp); err != nil {
		fmt.Println(err)
		return
	}
	var ni ibmad.NodeInfo
	if err := ni.UnmarshalBinary(resp.MAD.SMPData()); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ni.NodeType, "with", ni.NumPorts, "ports; the SMP entered on port", ni.LocalPortNum)
	// Output: switch with 3 ports; the SMP entered on port 1
}

// An SA table over RMPP: the engine asks the simulated fabric's subnet
// manager for every NodeRecord (GetTable), acknowledges the segments as
// they come and returns the records reassembled, one per switch and per
// CA port. Package ibmad/sa wraps this for the records the tracer uses.
func ExampleEngine_GetTable() {
	topo, _ := sim.FatTree2(2, 1, 2, 1) // leaves L0, L1; spine S0; hosts H<leaf>-<n>
	fabric, _ := sim.New(topo, sim.Options{})
	tr, _ := fabric.Attach("H0-0", 0)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: time.Second})
	defer e.Close()

	port, _ := tr.Port()
	req := &ibmad.Request{Addr: ibmad.GSIAddress(port.SMLID, port.SMSL)}
	if err := ibmad.NewSAGet(ibmad.AttrNodeRecord, 0).MarshalTo(req.MAD[:]); err != nil {
		fmt.Println(err)
		return
	}
	table, err := e.GetTable(context.Background(), req, ibmad.TableRequest{})
	if err != nil {
		fmt.Println(err)
		return
	}
	var names []string
	for i := 0; i < table.Len(); i++ {
		var nr ibmad.NodeRecord
		if err := nr.UnmarshalBinary(table.Record(i)); err != nil {
			fmt.Println(err)
			return
		}
		names = append(names, fmt.Sprintf("%s (%s)", nr.NodeDescription.String(), nr.NodeInfo.NodeType))
	}
	sort.Strings(names)
	fmt.Println(table.Len(), "NodeRecords of", table.RecordSize, "bytes in", table.Segments, "segments:")
	for _, n := range names {
		fmt.Println(n)
	}
	// Output:
	// 7 NodeRecords of 112 bytes in 4 segments:
	// H0-0 (ca)
	// H0-1 (ca)
	// H1-0 (ca)
	// H1-1 (ca)
	// L0 (switch)
	// L1 (switch)
	// S0 (switch)
}

// The codecs: an attribute marshals to its wire layout and back, and a
// node description is shown by one rule whatever bytes it holds.
func ExampleNodeInfo_MarshalBinary() {
	in := ibmad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: ibmad.NodeTypeCA, NumPorts: 2,
		NodeGUID: 0x0002c90300a1b2c0, PortGUID: 0x0002c90300a1b2c1, LocalPortNum: 1, VendorID: 0x02c9}
	b, _ := in.MarshalBinary()
	var out ibmad.NodeInfo
	_ = out.UnmarshalBinary(b)
	fmt.Println(len(b), "bytes;", out.NodeGUID, out.PortGUID, out == in)

	nd := ibmad.NewNodeDescription("rack\x013 \xff mlx5_0")
	fmt.Printf("%q\n", nd.String())
	// Output:
	// 40 bytes; 0x0002c90300a1b2c0 0x0002c90300a1b2c1 true
	// "rack 3 \\xff mlx5_0"
}
