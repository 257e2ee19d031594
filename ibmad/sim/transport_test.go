package sim

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/memtest"
)

type client struct {
	t  testing.TB
	tr *Transport
	e  *ibmad.Engine
}

func attach(t testing.TB, f *Fabric, node string) *client {
	t.Helper()
	tr, err := f.Attach(node, 0)
	if err != nil {
		t.Fatal(err)
	}
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 50 * time.Millisecond, NoRetry: true})
	t.Cleanup(func() { e.Close() })
	return &client{t: t, tr: tr, e: e}
}

func (c *client) do(req *ibmad.Request) (*ibmad.Response, error) {
	var resp ibmad.Response
	err := c.e.Do(context.Background(), req, &resp)
	return &resp, err
}

func (c *client) lidNodeInfo(lid uint16) (ibmad.NodeInfo, error) {
	req := &ibmad.Request{Addr: ibmad.SMPAddress(lid)}
	_ = ibmad.NewLIDGet(ibmad.AttrNodeInfo, 0).MarshalTo(req.MAD[:])
	resp, err := c.do(req)
	var ni ibmad.NodeInfo
	if err == nil {
		err = ibmad.SMPStatus(&resp.MAD).Err()
	}
	if err == nil {
		err = ni.UnmarshalBinary(resp.MAD.SMPData())
	}
	return ni, err
}

// vendorGet sends a SourceRoute Get to lid and returns the response.
func (c *client) vendorGet(lid uint16) (*ibmad.Response, error) {
	v := ibmad.NewVendorGet(ibmad.ClassIBTracer, ibmad.OUIOpenIB, ibmad.AttrSourceRoute, 0)
	req := &ibmad.Request{Addr: ibmad.GSIAddress(lid, 0)}
	_ = v.MarshalTo(req.MAD[:])
	return c.do(req)
}

// serveIngress registers an agent that answers with the ingress port the
// fabric reported.
func (c *client) serveIngress() {
	err := c.e.Handle(ibmad.ClassIBTracer, 1, ibmad.OUIOpenIB, []ibmad.Method{ibmad.MethodGet}, false,
		func(req, resp *ibmad.Packet) bool {
			resp.MAD = req.MAD
			resp.MAD.SetMethod(ibmad.MethodGetResp)
			resp.MAD[ibmad.VendorDataOffset] = req.InPort
			resp.Addr = req.Addr
			return true
		})
	if err != nil {
		c.t.Fatal(err)
	}
}

func TestSeveralNodesInOneProcess(t *testing.T) {
	f := mustFabric(t, "fattree-mini.net", Options{})
	var clients []*client
	for _, n := range []string{"H0-0", "H0-1", "H1-2", "S1"} {
		clients = append(clients, attach(t, f, n))
	}
	for i, a := range clients {
		for j, b := range clients {
			p, _ := b.tr.Port()
			ni, err := a.lidNodeInfo(p.LID)
			if err != nil || ni.NodeGUID != p.NodeGUID {
				t.Fatalf("client %d -> %d: %v", i, j, err)
			}
		}
	}
	if _, err := f.Attach("nosuch", 0); err == nil {
		t.Fatal("attach to an unknown node")
	}
	if _, err := f.Attach("H0-0", 2); err == nil || fmt.Sprint(err) != `sim: node "H0-0" has no port 2 (1..1)` {
		t.Fatalf("bad port: %v", err)
	}
}

// TestIdleTransportIsSmall: a transport that receives nothing holds
// little memory. ibtracer-fabric attaches one per node for the agents
// (10,432 on the capacity benchmark's fabric), where a receive queue
// allocated whole (1,024 slots) was 94 MB of its live heap.
func TestIdleTransportIsSmall(t *testing.T) {
	topo, err := FatTree2(2, 1, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(topo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	trs := make([]*Transport, 0, n)
	before := memtest.HeapAlloc()
	for i := 0; i < n; i++ {
		tr, err := f.Attach("H0-0", 0)
		if err != nil {
			t.Fatal(err)
		}
		trs = append(trs, tr)
	}
	per := (int64(memtest.HeapAlloc()) - int64(before)) / n
	// The node's transport list is copied on every Attach: that garbage
	// is collected, the list itself is 8 bytes a transport.
	t.Logf("%d bytes per idle transport", per)
	if per > 1024 {
		t.Errorf("%d bytes per idle transport, want at most 1024", per)
	}
	// The queue still takes QueueDepth MADs and counts the rest.
	tr := trs[0]
	for i := 0; i < QueueDepth+5; i++ {
		p := tr.packet()
		p.MAD[0] = byte(i)
		tr.enqueue(p)
	}
	if o := tr.Overflows(); o != 5 {
		t.Errorf("%d overflows, want 5", o)
	}
	var p ibmad.Packet
	for i := 0; i < QueueDepth; i++ {
		if err := tr.Recv(&p); err != nil || p.MAD[0] != byte(i) {
			t.Fatalf("MAD %d: first byte %d, %v: want FIFO order", i, p.MAD[0], err)
		}
	}
	for _, tr := range trs {
		tr.Close()
	}
	if err := tr.Recv(&p); err != ibmad.ErrClosed {
		t.Errorf("Recv after Close: %v, want ErrClosed", err)
	}
}
