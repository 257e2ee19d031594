package ibsim_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

func TestDialWithoutIbsimFailsClearly(t *testing.T) {
	start := time.Now()
	_, err := ibsim.Dial(ibsim.Options{SockName: "ibt-nobody-listens", Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "no simulator answers at @ibt-nobody-listens:ctl") ||
		!strings.Contains(err.Error(), "IBSIM_SOCKNAME") {
		t.Fatalf("got %v", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Fatalf("took %v: must fail, not hang", time.Since(start))
	}
	// Inet mode to a loopback port nobody serves.
	_, err = ibsim.Dial(ibsim.Options{ServerName: "127.0.0.1", ServerPort: 1, Timeout: 500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no simulator answers at udp 127.0.0.1:1") {
		t.Fatalf("inet: got %v", err)
	}
}

func TestAttachRules(t *testing.T) {
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "two-switch.net"), ibsimtest.Options{})
	if _, err := ibsim.Dial(fab.Options("no-such-node", false)); err == nil || !strings.Contains(err.Error(), `refused to attach a client at node "no-such-node"`) {
		t.Fatalf("unknown node: %v", err)
	}
	tr := fab.Dial("host2", true)
	if tr.NodeName() != "host2" {
		t.Fatalf("attached at %q", tr.NodeName())
	}
	// ibsim allows one request-accepting client per node.
	if _, err := ibsim.Dial(fab.Options("host2", true)); err == nil || !strings.Contains(err.Error(), "another client on that node already receives requests") {
		t.Fatalf("second issm client: %v", err)
	}
	// A plain client on the same node is fine.
	plain := fab.Dial("host2", false)
	if err := plain.Register(ibmad.Registration{Class: ibmad.ClassIBTracer, Version: 1, OUI: ibmad.OUIOpenIB,
		Methods: []ibmad.Method{ibmad.MethodGet}}); err == nil {
		t.Fatal("a client without the issm flag accepted a registration")
	}
	// Ten clients in all: we hold two, eight more fit, the eleventh fails.
	var extra []*ibsim.Transport
	defer func() {
		for _, x := range extra {
			x.Close()
		}
	}()
	for i := 0; i < 8; i++ {
		x, err := ibsim.Dial(fab.Options("host1", false))
		if err != nil {
			t.Fatalf("client %d: %v", i+3, err)
		}
		extra = append(extra, x)
	}
	if _, err := ibsim.Dial(fab.Options("host1", false)); err == nil || !strings.Contains(err.Error(), "maximum of 10 clients") {
		t.Fatalf("11th client: %v", err)
	}
	// Disconnecting frees a slot.
	extra[0].Close()
	x, err := ibsim.Dial(fab.Options("host1", false))
	if err != nil {
		t.Fatalf("after a disconnect: %v", err)
	}
	extra[0] = x
}

func TestRequestsReachAnAcceptingClient(t *testing.T) {
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "chain-5.net"), ibsimtest.Options{})
	agentTr := fab.Dial("hostB", true)
	agent := ibmad.NewEngine(agentTr, ibmad.Options{})
	defer agent.Close()
	seen := make(chan *ibmad.Packet, 1)
	err := agent.Handle(ibmad.ClassIBTracer, 1, ibmad.OUIOpenIB, []ibmad.Method{ibmad.MethodGet}, false,
		func(req, resp *ibmad.Packet) bool {
			cp := *req
			seen <- &cp
			resp.MAD = req.MAD
			resp.MAD.SetMethod(ibmad.MethodGetResp)
			resp.Addr = req.Addr
			return true
		})
	if err != nil {
		t.Fatal(err)
	}
	tr := fab.Dial("hostA", false)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: time.Second})
	defer e.Close()
	me, _ := tr.Port()
	dst, _ := agentTr.Port()
	ask := func(class ibmad.MgmtClass, oui ibmad.OUI) (*ibmad.Response, error) {
		v := ibmad.NewVendorGet(class, oui, ibmad.AttrSourceRoute, 0)
		req := &ibmad.Request{Addr: ibmad.GSIAddress(dst.LID, 0), NoRetry: true}
		_ = v.MarshalTo(req.MAD[:])
		var resp ibmad.Response
		err := e.Do(context.Background(), req, &resp)
		return &resp, err
	}
	resp, err := ask(ibmad.ClassIBTracer, ibmad.OUIOpenIB)
	if err != nil || resp.MAD.Status() != 0 || resp.MAD.Method() != ibmad.MethodGetResp {
		t.Fatalf("vendor Get to the agent: %v %v", err, resp.MAD.Status())
	}
	got := <-seen
	if got.Addr.LID != me.LID || got.Addr.QPN != ibmad.QP1 || !got.InPortKnown || got.InPort != 1 {
		t.Fatalf("agent saw %+v (want SLID %d, QP1, in-port 1)", got.Addr, me.LID)
	}
	// ibping's class, which nobody registered: the transport answers as the
	// kernel would, unsupported.
	if resp, err = ask(ibmad.ClassOpenIBPing, ibmad.OUIOpenIB); err != nil || resp.MAD.Status() != ibmad.StatusMethodAttrUnsupp {
		t.Fatalf("unregistered class: %v %v", err, resp.MAD.Status())
	}
	// ... and the agent's engine counts the request it never saw.
	deadline := time.Now().Add(5 * time.Second)
	for agent.Stats().Drops[ibmad.DropTransportAnswered] != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("drops %v: the transport's own 0x000C answer was not counted", agent.Stats().Drops)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A node with no client at all: ibsim bounces the request at once.
	other, _ := fab.Dial("hostC", false).Port()
	v := ibmad.NewVendorGet(ibmad.ClassIBTracer, ibmad.OUIOpenIB, ibmad.AttrClassPortInfo, 0)
	req := &ibmad.Request{Addr: ibmad.GSIAddress(other.LID+100, 0), NoRetry: true}
	_ = v.MarshalTo(req.MAD[:])
	start := time.Now()
	if err := e.Do(context.Background(), req, &ibmad.Response{}); !errors.Is(err, ibmad.ErrTimeout) || time.Since(start) > 500*time.Millisecond {
		t.Fatalf("unroutable LID: %v after %v (want a prompt timeout report)", err, time.Since(start))
	}
}
