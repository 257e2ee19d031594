package madtest_test

import (
	"context"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
)

// An engine over a scripted transport: every NodeInfo Get is answered
// with a switch's NodeInfo, as if from the node asked.
func Example() {
	tr := madtest.New(func(sent *ibmad.Packet) []*ibmad.Packet {
		if sent.MAD.Method() != ibmad.MethodGet || sent.MAD.AttrID() != ibmad.AttrNodeInfo {
			return nil // dropped: the request times out
		}
		resp := *sent
		resp.MAD.SetMethod(ibmad.MethodGetResp)
		ni := ibmad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: ibmad.NodeTypeSwitch, NumPorts: 36, NodeGUID: 0x0002c90300000001}
		_ = ni.MarshalTo(resp.MAD.SMPData())
		return []*ibmad.Packet{&resp}
	})
	e := ibmad.NewEngine(tr, ibmad.Options{})
	defer e.Close()

	req := &ibmad.Request{Addr: ibmad.SMPAddress(7)}
	_ = ibmad.NewLIDGet(ibmad.AttrNodeInfo, 0).MarshalTo(req.MAD[:])
	var resp ibmad.Response
	if err := e.Do(context.Background(), req, &resp); err != nil {
		fmt.Println(err)
		return
	}
	var ni ibmad.NodeInfo
	_ = ni.UnmarshalBinary(resp.MAD.SMPData())
	fmt.Println(ni.NodeType, ni.NumPorts, ni.NodeGUID, "after", resp.Attempts, "attempt")
	// Output: switch 36 0x0002c90300000001 after 1 attempt
}
