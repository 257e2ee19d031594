package trace

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// pmaProbeSends records the address of every PerfMgt ClassPortInfo Get
// the tracer sends: auto mode's probe of the first hop's neighbour
// (discovery.go, firstHopRefused).
type pmaProbeSends struct {
	ibmad.Transport
	mu  sync.Mutex
	got []ibmad.Address
}

func (p *pmaProbeSends) Send(pk *ibmad.Packet) error {
	if pk.MAD.MgmtClass() == ibmad.ClassPerfMgt && pk.MAD.AttrID() == ibmad.AttrClassPortInfo && !pk.MAD.Method().IsResponse() {
		p.mu.Lock()
		p.got = append(p.got, pk.Addr)
		p.mu.Unlock()
	}
	return p.Transport.Send(pk)
}

func (p *pmaProbeSends) addrs() []ibmad.Address {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ibmad.Address(nil), p.got...)
}

// TestAutoProbeKeepsTheAddressing: auto mode's SMPs are refused at the
// neighbour (M_Key protection) and the tracer asks the neighbour's PMA
// whether it lives. The tracer's SL for LID destinations (Options.SL) is
// 2, which the fabric drops (no VL serves it), and the destination's
// PathRecord gives SL 5: the probe goes on SL 5, the SL the trace
// reports, so the neighbour's answer arrives and the trace falls back to
// the SA. A probe on SL 2 would be dropped, and the trace would take the
// live neighbour for a dead one. (The SA's own queries go on the SM's
// SL, 0 here, which the fabric carries.)
func TestAutoProbeKeepsTheAddressing(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{SMNode: "H1-2"}) // the tracer at H0-0 is not the SM
	const sl = 5
	guid := s.f.Node("H1-1").Ports[1].GUID
	s.f.SetPathQoS(guid, sim.PathQoS{SL: sl})
	s.f.SetSLUnusable(2, true)
	s.f.SetSMPMKeyProtect(true)
	tp, err := s.f.Attach("H0-0", 0)
	if err != nil {
		t.Fatal(err)
	}
	rec := &pmaProbeSends{Transport: tp}
	e := ibmad.NewEngine(rec, ibmad.Options{Timeout: 100 * time.Millisecond, NoRetry: true})
	defer e.Close()
	auto := New(e, Options{SL: DefaultSL(2), Discovery: DiscoveryAuto, Validate: ValidateOff, Retries: new(0), Timeout: 100 * time.Millisecond})
	r := auto.Trace(context.Background(), Destination{GUID: guid})
	probes := rec.addrs()
	if len(probes) == 0 {
		t.Fatalf("no probe of the neighbour was sent (%s %s %v): the test proves nothing", r.Status, r.Reason, r.Err)
	}
	for _, a := range probes {
		if a.SL != sl {
			t.Errorf("the probe of the neighbour went on SL %d; the PathRecord gives SL %d", a.SL, sl)
		}
	}
	if r.Addressing == nil || r.Addressing.SL != sl || r.Addressing.SLFrom != SLFromPathRecord {
		t.Errorf("the trace reports addressing %+v, want SL %d from the PathRecord", r.Addressing, sl)
	}
	if r.Status != StatusOK || r.Discovery != DiscoverySA || auto.Fallbacks() != 1 {
		t.Fatalf("M_Key-protected neighbour, SL 2 unusable: %s %s %v, discovery %s, %d fallbacks; want ok through the SA, 1 fallback",
			r.Status, r.Reason, r.Err, r.Discovery, auto.Fallbacks())
	}
}
