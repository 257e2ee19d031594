package sim

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// drGet sends one directed-route Get through the engine and decodes nothing.
func drGet(ctx context.Context, e *ibmad.Engine, path ibmad.DRPath, attr ibmad.AttrID, mod uint32) (*ibmad.MAD, error) {
	var smp ibmad.SMP
	if err := smp.InitDRGet(attr, mod, path); err != nil {
		return nil, err
	}
	req := &ibmad.Request{Addr: ibmad.DRAddress()}
	if err := smp.MarshalTo(req.MAD[:]); err != nil {
		return nil, err
	}
	var resp ibmad.Response
	if err := e.Do(ctx, req, &resp); err != nil {
		return nil, err
	}
	if st := ibmad.SMPStatus(&resp.MAD); st != 0 {
		return nil, fmt.Errorf("path %s attr %#x: %v", path, attr, st)
	}
	return &resp.MAD, nil
}

// discoverLinks walks the subnet from the engine's port with directed-route
// SMPs only, as ibnetdiscover does, and returns every link as
// "descA[pa] - descB[pb]" with the ends in sorted order.
func discoverLinks(ctx context.Context, e *ibmad.Engine) ([]string, error) {
	type node struct {
		path ibmad.DRPath
		ni   ibmad.NodeInfo
		desc string
	}
	probe := func(path ibmad.DRPath) (*node, error) {
		m, err := drGet(ctx, e, path, ibmad.AttrNodeInfo, 0)
		if err != nil {
			return nil, err
		}
		n := &node{path: path}
		if err := n.ni.UnmarshalBinary(m.SMPData()); err != nil {
			return nil, err
		}
		m, err = drGet(ctx, e, path, ibmad.AttrNodeDescription, 0)
		if err != nil {
			return nil, err
		}
		var d ibmad.NodeDescription
		_ = d.UnmarshalBinary(m.SMPData())
		n.desc = d.String()
		return n, nil
	}
	root, err := probe(ibmad.DRPath{})
	if err != nil {
		return nil, err
	}
	seen := map[ibmad.GUID]bool{root.ni.NodeGUID: true}
	queue := []*node{root}
	links := map[string]bool{}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n.ni.NodeType != ibmad.NodeTypeSwitch && len(n.path) > 0 {
			continue // a remote CA forwards nothing; its link is known from the switch side
		}
		for p := 1; p <= int(n.ni.NumPorts); p++ {
			if n.ni.NodeType != ibmad.NodeTypeSwitch && p != int(n.ni.LocalPortNum) {
				continue // the local CA reaches out only through its own port
			}
			m, err := drGet(ctx, e, n.path, ibmad.AttrPortInfo, uint32(p))
			if err != nil {
				return nil, err
			}
			var pi ibmad.PortInfo
			_ = pi.UnmarshalBinary(m.SMPData())
			if pi.PortPhysState != ibmad.PhysStateLinkUp {
				continue
			}
			peer, err := probe(n.path.Extend(uint8(p)))
			if err != nil {
				return nil, err
			}
			a := fmt.Sprintf("%s[%d]", n.desc, p)
			b := fmt.Sprintf("%s[%d]", peer.desc, peer.ni.LocalPortNum)
			if b < a {
				a, b = b, a
			}
			links[a+" - "+b] = true
			if !seen[peer.ni.NodeGUID] {
				seen[peer.ni.NodeGUID] = true
				queue = append(queue, peer)
			}
		}
	}
	out := make([]string, 0, len(links))
	for l := range links {
		out = append(out, l)
	}
	sort.Strings(out)
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
			if b < a {
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
