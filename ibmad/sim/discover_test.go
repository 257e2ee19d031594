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
