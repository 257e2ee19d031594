package trace

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
)

var localPortRe = regexp.MustCompile(`(?m)^LocalPort:\.*(\d+)$`)

// stockLocalPort runs stock `smpquery nodeinfo <lid>` (LID-routed) at node
// and returns the LocalPort it prints, once per (node, lid).
type stockLocalPort struct {
	fab  *ibsimtest.Fabric
	mu   sync.Mutex
	seen map[string]uint8
}

func (s *stockLocalPort) get(node string, lid uint16) (uint8, error) {
	key := fmt.Sprintf("%s/%d", node, lid)
	s.mu.Lock()
	v, ok := s.seen[key]
	s.mu.Unlock()
	if ok {
		return v, nil
	}
	out, err := s.fab.Tool(node, "smpquery", "nodeinfo", strconv.Itoa(int(lid)))
	if err != nil {
		return 0, err
	}
	m := localPortRe.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("smpquery nodeinfo %d at %s printed no LocalPort:\n%s", lid, node, out)
	}
	n, _ := strconv.Atoi(m[1])
	s.mu.Lock()
	s.seen[key] = uint8(n)
	s.mu.Unlock()
	return uint8(n), nil
}

// fabricLIDs walks the fabric from node: every switch's LID and every CA
// port's, with its node type.
func fabricLIDs(t *testing.T, e *ibmad.Engine) map[uint16]ibmad.NodeType {
	t.Helper()
	ctx := context.Background()
	ports, err := madtest.WalkPortLIDs(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	lids := map[uint16]ibmad.NodeType{}
	for _, p := range ports {
		lids[p.LID] = p.Node.Info.NodeType
	}
	return lids
}

// TestSMAValidationOracleOnIbsim: on ibsim + OpenSM with no agent
// anywhere, from two sources (a 1-port host and a 2-port HCA) of a ring of
// switches with parallel links and 2-port HCAs, to every LID (every CA
// port, every switch, the SM's host), every hop is asked its SMA only
// (--validate=sma: no vendor MAD anywhere, so OpenSM, kept running on a
// host of its own, is never sent one; SMPs to it are answered by ibsim):
//   - the LocalPortNum we read equals what stock `smpquery nodeinfo
//     <LID>`, LID-routed from the same node, prints as LocalPort: the
//     LID-routed SMP is built, sent and read right on the wire;
//   - every CA hop is validated, every switch hop ingress_unknown (ibsim
//     fills LocalPortNum only for directed-route SMPs), none lost or
//     mismatched.
//
// Afterwards OpenSM still answers the SA.
func TestSMAValidationOracleOnIbsim(t *testing.T) {
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "mesh-4.net"), ibsimtest.Options{KeepSM: true, SMHost: true})
	stock := &stockLocalPort{fab: fab, seen: map[string]uint8{}}
	hops, cas, switches := 0, 0, 0
	for _, src := range []string{"h1", "hC"} {
		e := ibmad.NewEngine(fab.Dial(src, false), ibmad.Options{Timeout: 2 * time.Second})
		t.Cleanup(func() { e.Close() })
		lids := fabricLIDs(t, e)
		if len(lids) != 4+4+4*2+1 {
			t.Fatalf("%d LIDs, want 17 (4 switches, 4 hosts, 4 2-port HCAs, the SM's host)", len(lids))
		}
		tr := New(e, Options{Validate: ValidateSMA, Timeout: 2 * time.Second, Retries: new(1)})
		own, err := e.Port()
		if err != nil {
			t.Fatal(err)
		}
		for lid := range lids {
			if lid == own.LID {
				continue
			}
			r := tr.Trace(context.Background(), Destination{LID: lid})
			if r.Status != StatusOK {
				t.Fatalf("%s to LID %d: %s %v", src, lid, r.Status, r.Err)
			}
			for _, h := range r.Hops[1:] {
				target := h.LID
				if h.Hop == r.PathHops() {
					target = r.DLID
				}
				want, err := stock.get(src, target)
				if err != nil {
					t.Fatal(err)
				}
				verdict := AgentValidated
				if h.NodeType == ibmad.NodeTypeSwitch {
					verdict = AgentIngressUnknown
					switches++
				} else {
					cas++
				}
				if h.ActualInPort != want || h.Agent != verdict || h.ValidatedBy != BySMA {
					t.Errorf("%s to LID %d, hop %d %s (LID asked %d): LocalPortNum %d, stock smpquery %d; %s by %q, want %s by sma",
						src, lid, h.Hop, h.NodeDesc, target, h.ActualInPort, want, h.Agent, h.ValidatedBy, verdict)
				}
				if verdict == AgentValidated && h.ActualInPort != h.ExpectedInPort {
					t.Errorf("%s to LID %d, hop %d %s: in port %d, expected %d", src, lid, h.Hop, h.NodeDesc, h.ActualInPort, h.ExpectedInPort)
				}
				hops++
			}
		}
	}
	if cas == 0 || switches == 0 {
		t.Fatalf("%d CA hops, %d switch hops", cas, switches)
	}
	if _, err := fab.Tool("h1", "saquery", "-s"); err != nil {
		t.Fatalf("OpenSM after the SMPs to its node: %v", err)
	}
	t.Logf("%d hops compared with smpquery (%d CA hops validated, %d switch hops ingress unknown); %d distinct LIDs asked", hops, cas, switches, len(stock.seen))
}
