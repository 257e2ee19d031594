package sim

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
)

func TestLIDRoutedSMPReachesEveryLID(t *testing.T) {
	f := mustFabric(t, "fattree-128.net", Options{LMC: 1})
	c := attach(t, f, "H3-5")
	for _, n := range f.Nodes() {
		for _, p := range n.Ports {
			if p.LID == 0 || (n.IsSwitch() && p.Num != 0) {
				continue
			}
			lo, hi := p.LIDRange()
			for lid := lo; lid <= hi; lid++ {
				ni, err := c.lidNodeInfo(lid)
				if err != nil {
					t.Fatalf("LID %d (%s): %v", lid, n.Name, err)
				}
				if ni.NodeGUID != n.GUID || (!n.IsSwitch() && ni.LocalPortNum != p.Num) {
					t.Fatalf("LID %d answered by %s port %d, want %s port %d", lid, ni.NodeGUID, ni.LocalPortNum, n.GUID, p.Num)
				}
			}
		}
	}
	if lo, hi := f.Node("H0-0").Ports[1].LIDRange(); hi != lo+1 || lo%2 != 0 {
		t.Fatalf("LMC 1 range %d-%d not aligned", lo, hi)
	}
}

func TestVendorMADDeliveredWithTrueIngressPort(t *testing.T) {
	f := mustFabric(t, "two-switch.net", Options{})
	tracer := attach(t, f, "host1")
	for _, tc := range []struct {
		node   string
		wantIn uint8
	}{
		{"host2", 1}, // host1 - sw1 - sw2 - host2
		{"host5", 1}, // host5's port 1 faces sw1
		{"sw2", 3},   // sw1 reaches sw2 over port 3 or 5: minhop picks the less loaded
		{"sw1", 1},   // host1 enters sw1 on port 1
	} {
		agent := attach(t, f, tc.node)
		agent.serveIngress()
		lid, _ := f.LIDOf(tc.node, 0)
		resp, err := tracer.vendorGet(lid)
		if err != nil {
			t.Fatalf("%s: %v", tc.node, err)
		}
		got := resp.MAD[ibmad.VendorDataOffset]
		sw1 := f.Node("sw1")
		want := tc.wantIn
		if tc.node == "sw2" { // whichever parallel link sw1's LFT chose
			want = sw1.Ports[f.LFT("sw1")[lid]].Remote.Num
		}
		if got != want || resp.MAD.Status() != 0 {
			t.Errorf("%s: ingress %d status %s, want %d", tc.node, got, resp.MAD.Status(), want)
		}
	}
}

func TestNoAgentGetsUnsupportedStatus(t *testing.T) {
	f := mustFabric(t, "chain-5.net", Options{})
	c := attach(t, f, "hostA")
	lid, _ := f.LIDOf("hostB", 1)
	resp, err := c.vendorGet(lid)
	if err != nil {
		t.Fatal(err)
	}
	if resp.MAD.Status() != ibmad.StatusMethodAttrUnsupp || resp.MAD.Method() != ibmad.MethodGetResp {
		t.Fatalf("status %s method %s, want 0x000c GetResp as the kernel answers", resp.MAD.Status(), resp.MAD.Method())
	}
	// An agent that registers and then goes away.
	agent := attach(t, f, "hostB")
	agent.serveIngress()
	if resp, err = c.vendorGet(lid); err != nil || resp.MAD.Status() != 0 {
		t.Fatalf("with agent: %v %s", err, resp.MAD.Status())
	}
	agent.e.Close()
	if resp, err = c.vendorGet(lid); err != nil || resp.MAD.Status() != ibmad.StatusMethodAttrUnsupp {
		t.Fatalf("after the agent left: %v %v", err, resp.MAD.Status())
	}
}

func TestHopLatency(t *testing.T) {
	f := mustFabric(t, "chain-5.net", Options{HopLatency: 2 * time.Millisecond})
	c := attach(t, f, "hostA")
	hostB, _ := f.LIDOf("hostB", 1)
	start := time.Now()
	if _, err := c.lidNodeInfo(hostB); err != nil {
		t.Fatal(err)
	}
	// 6 links each way at 2 ms.
	if d := time.Since(start); d < 24*time.Millisecond {
		t.Fatalf("round trip %v, want at least 24ms", d)
	}
}

// discoverLinks walks the subnet with directed-route SMPs only and
// returns every link as "descA[pa] - descB[pb]".
func discoverLinks(ctx context.Context, e *ibmad.Engine) ([]string, error) {
	sub, err := madtest.Walk(ctx, e)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(sub.Links))
	for i, l := range sub.Links {
		out[i] = l.String()
	}
	return out, nil
}

func topologyLinks(topo *Topology) []string {
	set := map[string]bool{}
	for _, n := range topo.Nodes {
		for p, l := range n.Links {
			if l.Peer == "" {
				continue
			}
			a := fmt.Sprintf("%s[%d]", n.Desc, p)
			b := fmt.Sprintf("%s[%d]", topo.Node(l.Peer).Desc, l.Port)
			if b < a || (b == a) {
				a, b = b, a
			}
			set[a+" - "+b] = true
		}
	}
	out := make([]string, 0, len(set))
	for l := range set {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

func TestDirectedRouteWalkRebuildsTopology(t *testing.T) {
	for _, tc := range []struct{ file, from string }{
		{"fattree-128.net", "H0-0"},
		{"fattree-128.net", "S3"}, // from a switch's port 0
		{"two-switch.net", "host5"},
		{"chain-5.net", "hostC"},
	} {
		t.Run(tc.file+"/"+tc.from, func(t *testing.T) {
			topo, err := LoadTopology(filepath.Join(topoDir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			f, err := New(topo, Options{})
			if err != nil {
				t.Fatal(err)
			}
			tr, err := f.Attach(tc.from, 0)
			if err != nil {
				t.Fatal(err)
			}
			e := ibmad.NewEngine(tr, ibmad.Options{Timeout: time.Second})
			defer e.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			got, err := discoverLinks(ctx, e)
			if err != nil {
				t.Fatal(err)
			}
			want := topologyLinks(topo)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("discovered %d links, topology has %d", len(got), len(want))
				gs := map[string]bool{}
				for _, l := range got {
					gs[l] = true
				}
				for _, l := range want {
					if !gs[l] {
						t.Errorf("missing %s", l)
					}
				}
			}
			if len(want) < 7 {
				t.Fatalf("topology has only %d links", len(want))
			}
		})
	}
}
