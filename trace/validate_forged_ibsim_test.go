package trace

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
)

// forger is a hostile client on ibsim: it registers the ibtracer class at
// its node and, for every request it receives, floods the asker with
// GetResps for the TIDs that follow that request's (guessing a counter),
// and for any TID it is told (a sniffer's: the answer carries the right
// TID but comes from the forger's LID). Each forged answer is a seed
// format SourceRoute (ExtVersion 0, no NodeGUID to check) with status 0,
// which also reads as "the agent runs" to a ClassPortInfo question.
type forger struct {
	t      *ibsimTransport
	told   chan [2]uint64 // a TID and the attribute asked
	sent   atomic.Uint64
	asker  atomic.Uint32 // the LID that asks, once seen
	hi     atomic.Uint64 // the high TID bits of its requests (ibsim routes answers by them)
	wg     sync.WaitGroup
	closed chan struct{}
}

type ibsimTransport = ibmad.Transport

const forgedInPort = 9 // no port of any node of fattree-mini

func (f *forger) forge(dlid uint16, tid uint64, attr ibmad.AttrID) {
	p := ibmad.Packet{Addr: ibmad.GSIAddress(dlid, 0)}
	v := ibmad.NewVendorGet(ibmad.ClassIBTracer, ibmad.OUIOpenIB, attr, 0)
	v.Method = ibmad.MethodGetResp
	sr := ibmad.SourceRoute{ActualInPort: forgedInPort, HopCount: 1}
	_ = sr.MarshalTo(v.Data[:])
	_ = v.MarshalTo(p.MAD[:])
	p.MAD.SetTID(tid)
	if (*f.t).Send(&p) == nil {
		f.sent.Add(1)
	}
}

func (f *forger) run() {
	defer f.wg.Done()
	go func() {
		for {
			select {
			case told := <-f.told:
				if lid := f.asker.Load(); lid != 0 {
					f.forge(uint16(lid), f.hi.Load()|told[0]&0xffffffff, ibmad.AttrID(told[1]))
				}
			case <-f.closed:
				return
			}
		}
	}()
	var p ibmad.Packet
	for {
		if err := (*f.t).Recv(&p); err != nil {
			return
		}
		if p.TimedOut || p.MAD.Method().IsResponse() {
			continue
		}
		f.asker.Store(uint32(p.Addr.LID))
		tid := p.MAD.TID()
		f.hi.Store(tid &^ 0xffffffff)
		for k := uint64(1); k <= 32; k++ {
			for _, attr := range []ibmad.AttrID{ibmad.AttrClassPortInfo, ibmad.AttrSourceRoute} {
				f.forge(p.Addr.LID, tid&^0xffffffff|(tid+k)&0xffffffff, attr)
			}
		}
	}
}

// TestForgedAnswersOnIbsim: on ibsim with OpenSM, H1-0 registers the
// ibtracer class and never answers; a hostile client on H1-1 floods the
// tracer with forged GetResps, guessing the TIDs that follow each request
// it is asked, and answering any TID a sniffer tells it. H1-0's hop is
// never validated by the agent, with validate agent and auto (auto may
// validate it by its SMA), and the forgeries are counted by why they
// were dropped. Before answers were matched to what was asked, and TIDs
// counted, the forger validated H1-0's hop with its own in port within
// a few rounds.
func TestForgedAnswersOnIbsim(t *testing.T) {
	if testing.Short() {
		t.Skip("starts ibsim and OpenSM")
	}
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-mini.net"), ibsimtest.Options{SMHost: true})

	// The silent node: the class is registered, nothing answers.
	silent := ibmad.NewEngine(fab.Dial("H1-0", true), ibmad.Options{})
	t.Cleanup(func() { silent.Close() })
	if err := silent.Handle(ibmad.ClassIBTracer, 1, ibmad.OUIOpenIB, []ibmad.Method{ibmad.MethodGet}, false,
		func(*ibmad.Packet, *ibmad.Packet) bool { return false }); err != nil {
		t.Fatal(err)
	}
	var ft ibsimTransport = fab.Dial("H1-1", true)
	if err := ft.Register(ibmad.Registration{Class: ibmad.ClassIBTracer, Version: 1, OUI: ibmad.OUIOpenIB,
		Methods: []ibmad.Method{ibmad.MethodGet}}); err != nil {
		t.Fatal(err)
	}
	fg := &forger{t: &ft, told: make(chan [2]uint64, 1024), closed: make(chan struct{})}
	fg.wg.Add(1)
	go fg.run()
	defer func() { close(fg.closed); ft.Close(); fg.wg.Wait() }()

	// The tracer's transport tells the sniffer every TID it sends.
	tt := &sniffed{Transport: fab.Dial("H0-0", false), told: fg.told}
	e := ibmad.NewEngine(tt, ibmad.Options{})
	t.Cleanup(func() { e.Close() })
	ports, err := madtest.WalkPortLIDs(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	var silentLID, forgerLID uint16
	for _, p := range ports {
		switch p.Node.Desc {
		case "H1-0":
			silentLID = p.LID
		case "H1-1":
			forgerLID = p.LID
		}
	}
	if silentLID == 0 || forgerLID == 0 {
		t.Fatalf("LIDs of H1-0 and H1-1 not found in %+v", ports)
	}

	for _, mode := range []ValidateMode{ValidateAgent, ValidateAuto} {
		tr := New(e, Options{Validate: mode, Timeout: 300 * time.Millisecond, Retries: new(1)})
		deadline := time.Now().Add(6 * time.Second)
		rounds := 0
		for time.Now().Before(deadline) {
			var wg sync.WaitGroup
			var r *Result
			wg.Add(2)
			go func() { defer wg.Done(); tr.Trace(context.Background(), Destination{LID: forgerLID}) }()
			go func() { defer wg.Done(); r = tr.Trace(context.Background(), Destination{LID: silentLID}) }()
			wg.Wait()
			rounds++
			if r.Status != StatusOK {
				t.Fatalf("%s: trace to H1-0: %s %v", mode, r.Status, r.Err)
			}
			h := r.Hops[len(r.Hops)-1]
			if h.ValidatedBy == ByAgent && h.Agent != AgentLost {
				t.Fatalf("%s, round %d: the silent H1-0's hop reads %s by the agent (in port %d); forged answers were taken (%d sent)",
					mode, rounds, h.Agent, h.ActualInPort, fg.sent.Load())
			}
			if mode == ValidateAuto && h.ValidatedBy == BySMA && h.ActualInPort == forgedInPort {
				t.Fatalf("auto: the SMA's verdict carries the forged in port")
			}
		}
		t.Logf("%s: %d rounds, H1-0's hop never validated by the agent", mode, rounds)
	}
	drops := map[string]uint64{}
	for r, n := range e.Stats().Drops {
		drops[r.String()] = n
	}
	t.Logf("%d forged answers sent; the tracer's drops: %v", fg.sent.Load(), drops)
	if drops["unknown_tid"] == 0 || drops["wrong_responder"] == 0 {
		t.Fatalf("forgeries not counted by reason: %v", drops)
	}
}

// sniffed is a transport whose sent requests' TIDs a sniffer learns.
type sniffed struct {
	ibmad.Transport
	told chan [2]uint64
}

func (s *sniffed) Send(p *ibmad.Packet) error {
	if p.MAD.MgmtClass() == ibmad.ClassIBTracer && !p.MAD.Method().IsResponse() {
		select {
		case s.told <- [2]uint64{p.MAD.TID(), uint64(p.MAD.AttrID())}:
		default:
		}
	}
	return s.Transport.Send(p)
}
