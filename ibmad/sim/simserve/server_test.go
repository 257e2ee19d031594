package simserve_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim/simserve"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

const topoDir = "../../../testdata/topologies"

var seq atomic.Int32

// serve serves f under a socket name of its own until the test ends.
func serve(t *testing.T, f *sim.Fabric, defNode string) *simserve.Server {
	t.Helper()
	s, err := simserve.Listen(f, simserve.Options{SockName: fmt.Sprintf("simserve%d_%d", os.Getpid(), seq.Add(1)),
		DefaultNode: defNode, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	t.Cleanup(func() {
		s.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return within 10s of Close")
		}
	})
	return s
}

func dial(t *testing.T, s *simserve.Server, node string, accept bool) *ibsim.Transport {
	t.Helper()
	tr, err := ibsim.Dial(ibsim.Options{SockName: s.SockName(), Node: node, AcceptRequests: accept, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func engine(t *testing.T, tr ibmad.Transport) *ibmad.Engine {
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 2 * time.Second, Retries: 2})
	t.Cleanup(func() { e.Close() })
	return e
}

type hopKey struct {
	guid        ibmad.GUID
	in, out     uint8
	lid         uint16
	agent       trace.AgentStatus
	actualInNum uint8
}

func hops(r *trace.Result) []hopKey {
	var out []hopKey
	for _, h := range r.Hops {
		out = append(out, hopKey{h.NodeGUID, h.InPort, h.OutPort, h.LID, h.Agent, h.ActualInPort})
	}
	return out
}

// TestTraceOverSocketEqualsInProcess: the tracer through our ibsim client
// and the server finds, for every CA LID of the fabric, the same status
// and the same hops (node, ports, LID, agent verdict) as through a
// transport attached in process at the same node, agents everywhere.
func TestTraceOverSocketEqualsInProcess(t *testing.T) {
	for _, topo := range []string{"chain-5.net", "fattree-mini.net"} {
		t.Run(topo, func(t *testing.T) {
			o := openFabric(t, ibopen.Config{SimTopology: filepath.Join(topoDir, topo), SimAgents: "all", SimSeed: 1})
			local, err := o.Fabric.Attach(o.Node, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { local.Close() })
			s := serve(t, o.Fabric, o.Node)
			remote := dial(t, s, "", false)
			if remote.NodeName() != o.Node {
				t.Fatalf("client attached at %q, want the default node %q", remote.NodeName(), o.Node)
			}
			inProc := trace.New(engine(t, local), trace.Options{NoFastPath: true, Validate: trace.ValidateAgent})
			overSock := trace.New(engine(t, remote), trace.Options{NoFastPath: true, Validate: trace.ValidateAgent})
			self, _ := o.Fabric.LIDOf(o.Node, 0)
			n := 0
			for _, lid := range o.Fabric.CALIDs() {
				if lid == self {
					continue
				}
				d := trace.Destination{LID: lid}
				want := inProc.Trace(context.Background(), d)
				got := overSock.Trace(context.Background(), d)
				if want.Status != trace.StatusOK {
					t.Fatalf("lid %d in process: %s %v", lid, want.Status, want.Err)
				}
				if got.Status != want.Status {
					t.Errorf("lid %d over the socket: %s (%v), in process %s", lid, got.Status, got.Err, want.Status)
					continue
				}
				if g, w := hops(got), hops(want); fmt.Sprint(g) != fmt.Sprint(w) {
					t.Errorf("lid %d: hops over the socket\n%v\nin process\n%v", lid, g, w)
				}
				for i, h := range got.Hops[1:] {
					if !h.Agent.AsPredicted() || h.Agent != want.Hops[i+1].Agent {
						t.Errorf("lid %d hop %d: agent %s, in process %s; want validated (over the traced link or another)",
							lid, h.Hop, h.Agent, want.Hops[i+1].Agent)
					}
				}
				n++
			}
			if n == 0 {
				t.Fatal("no destination traced")
			}
		})
	}
}

// TestAgentOverSocket: a client that connects with the issm flag receives
// the vendor requests that reach its node; an agent hosted there
// answers them through the server and validates the trace's last hop.
func TestAgentOverSocket(t *testing.T) {
	o := openFabric(t, ibopen.Config{SimTopology: filepath.Join(topoDir, "chain-5.net"), SimAgents: "none"})
	s := serve(t, o.Fabric, o.Node)
	host := dial(t, s, "hostB", true)
	if _, err := agent.New(engine(t, host), agent.Config{Hostname: "hostB"}); err != nil {
		t.Fatal(err)
	}
	tr := trace.New(engine(t, dial(t, s, "hostA", false)), trace.Options{NoFastPath: true, Validate: trace.ValidateAgent})
	lid, _ := o.Fabric.LIDOf("hostB", 0)
	r := tr.Trace(context.Background(), trace.Destination{LID: lid})
	if r.Status != trace.StatusOK {
		t.Fatalf("trace to hostB: %s %v", r.Status, r.Err)
	}
	last := r.Hops[len(r.Hops)-1]
	if last.Agent != trace.AgentValidated || last.ActualInPort != 1 {
		t.Errorf("last hop: agent %s, ingress %d; want validated on port 1", last.Agent, last.ActualInPort)
	}
	// The switches have no agent: the fabric answers for them as a kernel would.
	if h := r.Hops[1]; h.Agent != trace.AgentUnsupported {
		t.Errorf("hop 1 (a switch, no agent): %s, want unsupported", h.Agent)
	}
}

// TestOneRequestTakerPerNode: as ibsim, a second client that would
// receive a node's requests is refused while the first lives, and a
// client at an unknown node is refused.
func TestOneRequestTakerPerNode(t *testing.T) {
	f, err := sim.New(ibopen.DemoTopology(), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, f, "")
	first := dial(t, s, "", true)
	if _, err := ibsim.Dial(ibsim.Options{SockName: s.SockName(), AcceptRequests: true, Timeout: 10 * time.Second}); err == nil {
		t.Fatal("a second request taker at the default node was attached")
	}
	if _, err := ibsim.Dial(ibsim.Options{SockName: s.SockName(), Node: "no-such-node", Timeout: 10 * time.Second}); err == nil {
		t.Fatal("a client at an unknown node was attached")
	}
	first.Close()
	dial(t, s, "", true) // the node is free again
	if n := s.Clients(); n != 1 {
		t.Errorf("%d clients attached, want 1", n)
	}
}

// openFabric opens the simulated fabric c describes, closed when t ends.
func openFabric(t *testing.T, c ibopen.Config) *ibopen.Opened {
	t.Helper()
	o, err := c.OpenFabric()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	return o
}
