package ibmad

import (
	"context"
	"sync"
	"testing"
	"time"
)

// lossyTransport loses every request it is sent, remembering it, and
// delivers what the test puts in in.
type lossyTransport struct {
	mu   sync.Mutex
	sent []Packet
	in   chan Packet
	done chan struct{}
	once sync.Once
	port PortAttributes // what Port returns
}

func (l *lossyTransport) Send(p *Packet) error {
	l.mu.Lock()
	l.sent = append(l.sent, *p)
	l.mu.Unlock()
	return nil
}

func (l *lossyTransport) Recv(p *Packet) error {
	select {
	case *p = <-l.in:
		return nil
	case <-l.done:
		return ErrClosed
	}
}

func (l *lossyTransport) Register(Registration) error   { return nil }
func (l *lossyTransport) Port() (PortAttributes, error) { return l.port, nil }
func (l *lossyTransport) Close() error                  { l.once.Do(func() { close(l.done) }); return nil }

// A long-running exporter must not accumulate engine state: every attempt
// of a request keeps its TID mapped while the request waits (so a late
// answer to an earlier attempt still completes it), but once Do returns
// none of them stays, and answers that arrive later still find nothing
// and are counted as unknown (the soak, scripts/soak.sh, runs this path
// a few times a second under --sim.faults).
func TestEngineForgetsTIDsOfFinishedRequests(t *testing.T) {
	l := &lossyTransport{in: make(chan Packet), done: make(chan struct{})}
	e := NewEngine(l, Options{PortRefresh: time.Hour})
	defer e.Close()

	const requests, retries = 64, 2
	var wg sync.WaitGroup
	for i := 0; i < requests; i++ {
		wg.Add(1)
		go func(lid uint16) {
			defer wg.Done()
			req := &Request{Addr: SMPAddress(lid), Timeout: 2 * time.Millisecond, Retries: retries}
			g := NewLIDGet(AttrNodeInfo, 0)
			_ = g.MarshalTo(req.MAD[:])
			if err := e.Do(context.Background(), req, &Response{}); err == nil {
				t.Errorf("LID %d: answered by a transport that answers nothing", lid)
			}
		}(uint16(1 + i%8)) // several requests per target
	}
	wg.Wait()
	l.mu.Lock()
	sent := append([]Packet(nil), l.sent...)
	l.mu.Unlock()
	if len(sent) != requests*(retries+1) {
		t.Fatalf("%d attempts sent, want %d", len(sent), requests*(retries+1))
	}
	e.pending.mu.Lock()
	pending := len(e.pending.calls)
	e.pending.mu.Unlock()
	e.window.mu.Lock()
	targets := len(e.window.targets)
	e.window.mu.Unlock()
	if pending != 0 || targets != 0 {
		t.Fatalf("after every request returned: %d TIDs and %d targets still mapped", pending, targets)
	}

	// Every attempt answered, late.
	before := e.Stats().Drops[DropUnknownTID]
	for _, p := range sent {
		p.MAD.SetMethod(MethodGetResp)
		l.in <- p
	}
	deadline := time.Now().Add(30 * time.Second)
	for e.Stats().Drops[DropUnknownTID]-before < uint64(len(sent)) {
		if time.Now().After(deadline) {
			t.Fatalf("late answers counted as unknown: %d of %d", e.Stats().Drops[DropUnknownTID]-before, len(sent))
		}
		time.Sleep(time.Millisecond)
	}
	e.pending.mu.Lock()
	pending = len(e.pending.calls)
	e.pending.mu.Unlock()
	if pending != 0 {
		t.Fatalf("late answers left %d TIDs mapped", pending)
	}
}

// answerOf is the genuine answer to request p: its header with the
// response method, from where p was sent (a DR answer with D set).
func answerOf(p Packet) Packet {
	a := Packet{MAD: p.MAD, Addr: p.Addr}
	a.MAD.SetMethod(p.MAD.Method().Response())
	if p.MAD.IsDirectedRoute() {
		a.MAD[4] |= 0x80
	}
	return a
}

// TestForgedAnswersDoNotComplete: an answer carrying a waiting request's
// TID completes it only when it answers exactly what was asked, from
// where it was asked; every forgery is dropped and counted by why, and
// the genuine answer that follows still completes the request.
func TestForgedAnswersDoNotComplete(t *testing.T) {
	vendor := func() Request {
		req := Request{Addr: GSIAddress(7, 0), Timeout: 5 * time.Second, NoRetry: true}
		_ = NewVendorGet(ClassIBTracer, 0x001405, AttrSourceRoute, 0).MarshalTo(req.MAD[:])
		return req
	}
	dr := func() Request {
		req := Request{Addr: DRAddress(), Timeout: 5 * time.Second, NoRetry: true}
		s, _ := NewDRGet(AttrNodeInfo, 0, DRPath{0, 1, 3})
		_ = s.MarshalTo(req.MAD[:])
		return req
	}
	grh := func() Request {
		req := vendor()
		req.Addr.GRHPresent, req.Addr.GID = true, MakeGID(0xfe80000000000001, 0x1234)
		return req
	}
	for _, tc := range []struct {
		name  string
		req   func() Request
		forge func(a *Packet)
		why   DropReason
	}{
		{"another LID", vendor, func(a *Packet) { a.Addr.LID = 8 }, DropWrongResponder},
		{"another method", vendor, func(a *Packet) { a.MAD.SetMethod(MethodGetTableResp) }, DropWrongMethod},
		{"a request's method", vendor, func(a *Packet) { a.MAD.SetMethod(MethodTrapRepress) }, DropWrongMethod},
		{"another attribute", vendor, func(a *Packet) { a.MAD[17] = byte(AttrClassPortInfo) }, DropWrongAttribute},
		{"another modifier", vendor, func(a *Packet) { a.MAD[23] = 1 }, DropWrongAttribute},
		{"another OUI", vendor, func(a *Packet) { a.MAD[39] ^= 1 }, DropWrongAttribute},
		{"another class", vendor, func(a *Packet) { a.MAD[1] = byte(ClassOpenIBPing) }, DropUnknownTID},
		{"another initial path", dr, func(a *Packet) { a.MAD[130] = 4 }, DropWrongResponder},
		{"another hop count", dr, func(a *Packet) { a.MAD[7] = 1 }, DropWrongResponder},
		{"no D bit", dr, func(a *Packet) { a.MAD[4] &^= 0x80 }, DropWrongResponder},
		{"another GID", grh, func(a *Packet) { a.Addr.GID = MakeGID(0xfe80000000000001, 0x1235) }, DropWrongResponder},
		{"no GRH, another LID", grh, func(a *Packet) { a.Addr.GRHPresent, a.Addr.LID = false, 9 }, DropWrongResponder},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &lossyTransport{in: make(chan Packet), done: make(chan struct{})}
			e := NewEngine(l, Options{PortRefresh: time.Hour})
			defer e.Close()
			req := tc.req()
			done := make(chan error, 1)
			var resp Response
			go func() { done <- e.Do(context.Background(), &req, &resp) }()
			var sent Packet
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
				l.mu.Lock()
				n := len(l.sent)
				if n > 0 {
					sent = l.sent[0]
				}
				l.mu.Unlock()
				if n > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("nothing sent")
				}
			}
			forged := answerOf(sent)
			tc.forge(&forged)
			l.in <- forged
			for deadline := time.Now().Add(5 * time.Second); e.Stats().Drops[tc.why] == 0; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the forgery was not counted as %s: drops %v", tc.why, e.Stats().Drops)
				}
			}
			select {
			case err := <-done:
				t.Fatalf("the forgery completed the request: %v", err)
			default:
			}
			l.in <- answerOf(sent)
			if err := <-done; err != nil {
				t.Fatalf("the genuine answer after the forgery: %v", err)
			}
		})
	}
}

// An answer from another LID of the port asked (its base LID under the
// responder's LMC) is the port's; outside the block it is not.
func TestSameLIDBlock(t *testing.T) {
	for _, tc := range []struct {
		slid, dlid uint16
		lmc        uint8
		want       bool
	}{
		{6, 6, 0, true}, {6, 7, 0, false}, {6, 7, 1, true}, {8, 7, 1, false},
		{12, 15, 2, true}, {16, 15, 2, false},
	} {
		if got := sameLIDBlock(tc.slid, tc.dlid, tc.lmc); got != tc.want {
			t.Errorf("sameLIDBlock(%d, %d, LMC %d) = %v, want %v", tc.slid, tc.dlid, tc.lmc, got, tc.want)
		}
	}
}

// firstSent waits for the first packet l is sent.
func firstSent(t *testing.T, l *lossyTransport) Packet {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		l.mu.Lock()
		n := len(l.sent)
		var p Packet
		if n > 0 {
			p = l.sent[0]
		}
		l.mu.Unlock()
		if n > 0 {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatal("nothing sent")
		}
	}
}

// TestResponderLMC: the responder check follows the responder's own LMC
// (Request.DestLMC, as the SA or the walk read it), never the local
// port's, which the kernel applies only to the requester's own path bits
// (docs/protocol.md, "Which answer is ours"). An answer from outside the
// responder's LIDs is dropped as wrong_responder and the request waits on
// for its own; one from another LID of the responder's port completes it.
func TestResponderLMC(t *testing.T) {
	for _, tc := range []struct {
		name     string
		localLMC uint8
		dlid     uint16
		destLMC  uint8
		from     uint16
		grh      bool
		ok       bool
	}{
		{"local LMC 2, LMC-0 responder: another LID of the aligned block", 2, 9, 0, 8, false, false},
		{"local LMC 2, LMC-0 responder: the LID asked", 2, 9, 0, 9, false, true},
		{"local LMC 0, LMC-2 responder: its base LID", 0, 10, 2, 8, false, true},
		{"local LMC 0, LMC-2 responder: another of its LIDs", 0, 10, 2, 11, false, true},
		{"local LMC 0, LMC-2 responder: past its block", 0, 10, 2, 12, false, false},
		{"local LMC 2, GRH sent and none back: an LMC-0 router's neighbour", 2, 5, 0, 4, true, false},
		{"local LMC 0, GRH sent and none back: an LMC-1 router's base LID", 0, 5, 1, 4, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &lossyTransport{in: make(chan Packet), done: make(chan struct{}),
				port: PortAttributes{CA: "lmc", PortNum: 1, LID: 1, LMC: tc.localLMC}}
			e := NewEngine(l, Options{PortRefresh: time.Hour})
			defer e.Close()
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
				if p, ok := e.CachedPort(); ok && p.LMC == tc.localLMC {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the local port was never read")
				}
			}
			req := Request{Addr: GSIAddress(tc.dlid, 0), DestLMC: tc.destLMC, Timeout: 5 * time.Second, NoRetry: true}
			if tc.grh {
				req.Addr.GRHPresent, req.Addr.GID = true, MakeGID(0xfec0000000000002, 0x77)
			}
			_ = NewVendorGet(ClassIBTracer, OUIOpenIB, AttrSourceRoute, 0).MarshalTo(req.MAD[:])
			done := make(chan error, 1)
			var resp Response
			go func() { done <- e.Do(context.Background(), &req, &resp) }()
			sent := firstSent(t, l)
			answer := answerOf(sent)
			answer.Addr = Address{LID: tc.from, QPN: QP1} // no GRH back, as from ibsim
			l.in <- answer
			if tc.ok {
				if err := <-done; err != nil || resp.Addr.LID != tc.from {
					t.Fatalf("the answer from LID %d to a request for LID %d (responder LMC %d, local LMC %d): %v, from %d",
						tc.from, tc.dlid, tc.destLMC, tc.localLMC, err, resp.Addr.LID)
				}
				return
			}
			for deadline := time.Now().Add(5 * time.Second); e.Stats().Drops[DropWrongResponder] == 0; time.Sleep(time.Millisecond) {
				select {
				case err := <-done:
					t.Fatalf("the answer from LID %d completed the request for LID %d (responder LMC %d, local LMC %d): %v",
						tc.from, tc.dlid, tc.destLMC, tc.localLMC, err)
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("the answer from LID %d was not counted as wrong_responder: drops %v", tc.from, e.Stats().Drops)
				}
			}
			answer.Addr.LID = tc.dlid
			l.in <- answer
			if err := <-done; err != nil {
				t.Fatalf("the genuine answer after the stray: %v", err)
			}
		})
	}
}

// TIDs are not a sequence: of a thousand requests' TIDs none follows
// the one before by a fixed step, and none repeats while mapped.
func TestTIDsAreNotASequence(t *testing.T) {
	p := &pendingTable{calls: map[uint32]*call{}}
	var prev uint32
	steps := map[uint32]int{}
	for i := 0; i < 1000; i++ {
		tid := p.nextTID()
		if tid == 0 || p.calls[tid] != nil {
			t.Fatalf("TID %d: zero or mapped", tid)
		}
		p.calls[tid] = &call{}
		if i > 0 {
			steps[tid-prev]++
		}
		prev = tid
	}
	for step, n := range steps {
		if n > 3 {
			t.Fatalf("step %d between TIDs %d times out of 999: guessable", step, n)
		}
	}
}

// FuzzMatch: whatever a request and an answer hold, the matcher never
// panics, and an answer it accepts is of the request's class, carries
// its response method, attribute and modifier (and OUI in vendor range
// 2), and comes from where the request went.
func FuzzMatch(f *testing.F) {
	var v, d MAD
	_ = NewVendorGet(ClassIBTracer, 0x001405, AttrSourceRoute, 0).MarshalTo(v[:])
	s, _ := NewDRGet(AttrNodeInfo, 0, DRPath{0, 1, 3})
	_ = s.MarshalTo(d[:])
	f.Add(v[:], v[:], uint16(7), uint16(7), false, false, uint8(0))
	f.Add(d[:], d[:], uint16(PermissiveLID), uint16(3), false, false, uint8(1))
	f.Add(v[:], v[:], uint16(7), uint16(9), true, true, uint8(7))
	f.Fuzz(func(t *testing.T, reqb, respb []byte, dlid, slid uint16, reqGRH, respGRH bool, lmc uint8) {
		var req, resp Packet
		copy(req.MAD[:], reqb)
		copy(resp.MAD[:], respb)
		req.Addr = Address{LID: dlid, GRHPresent: reqGRH, GID: MakeGID(1, 2)}
		resp.Addr = Address{LID: slid, GRHPresent: respGRH, GID: MakeGID(1, 3)}
		x := expect(&req.MAD, &req.Addr, lmc)
		why, ok := x.match(&resp)
		if !ok {
			if why < 0 || why >= numDropReasons {
				t.Fatalf("drop reason %d out of range", why)
			}
			return
		}
		rq, rs := &req.MAD, &resp.MAD
		if rs.MgmtClass() != rq.MgmtClass() || rs.AttrID() != rq.AttrID() || rs.AttrMod() != rq.AttrMod() {
			t.Fatalf("accepted an answer about something else: %x for %x", rs[:24], rq[:24])
		}
		if m := rq.Method(); rs.Method() != m.Response() && !(m == MethodTrap && rs.Method() == MethodTrapRepress) {
			t.Fatalf("accepted method 0x%02x for 0x%02x", rs.Method(), m)
		}
		if rq.MgmtClass().IsVendorRange2() && rs.OUI() != rq.OUI() {
			t.Fatalf("accepted OUI %v for %v", rs.OUI(), rq.OUI())
		}
		switch {
		case rq.IsDirectedRoute():
			if !rs.DRDirection() || rs.DRHopCount() != rq.DRHopCount() && rq.DRHopCount() <= MaxDRHops {
				t.Fatalf("accepted a DR answer off the path asked")
			}
		case reqGRH && respGRH:
			t.Fatalf("accepted GID %v for %v", resp.Addr.GID, req.Addr.GID) // the fixtures' GIDs differ
		case dlid != PermissiveLID && slid>>(lmc&7) != dlid>>(lmc&7):
			t.Fatalf("accepted LID %d for %d (LMC %d)", slid, dlid, lmc)
		}
	})
}
