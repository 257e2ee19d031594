package agent

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
)

// One requester, one bucket, however it addresses us (docs/protocol.md,
// "What the agent answers"): a requester of our subnet that sends with a
// GRH (its port GID, whose prefix is ours) and without one (its LID
// alone) takes its tokens from one bucket, not two.
func TestRateLimitOneBucketWithOrWithoutGRH(t *testing.T) {
	for _, prefix := range []uint64{0, 0xfec0_0000_0000_0001} { // the default link-local prefix, a site's own
		logs := &logLines{}
		r := newRigOnPort(t, ibmad.PortAttributes{CA: "fake", PortNum: 1, NodeType: ibmad.NodeTypeCA, NodeGUID: 0x1111,
			PortGUID: 0x1112, NodeDesc: "node-a", LID: 42, GIDPrefix: prefix}, Config{RatePerSource: 10, Burst: 2, Log: logs.log})
		gidPrefix := prefix
		if gidPrefix == 0 {
			gidPrefix = ibmad.DefaultGIDPrefix
		}
		ask := func(grh bool) bool {
			t.Helper()
			v := ibmad.NewVendorGet(ibmad.ClassIBTracer, ibmad.OUIOpenIB, ibmad.AttrClassPortInfo, 0)
			p := &ibmad.Packet{Addr: ibmad.Address{LID: 9, QPN: 1}, InPort: 1, InPortKnown: true}
			if grh {
				p.Addr.GRHPresent, p.Addr.GID, p.Addr.HopLimit = true, ibmad.MakeGID(gidPrefix, 0x0002c90300000009), 1
			}
			_ = v.MarshalTo(p.MAD[:])
			r.tr.Inject(p)
			select {
			case <-r.out:
				return true
			case <-time.After(200 * time.Millisecond):
				return false
			}
		}
		answered := 0
		for i := range 4 {
			if ask(i%2 == 0) {
				answered++
			}
		}
		if answered != 2 {
			t.Errorf("prefix %#x: answered %d of 4 requests from LID 9, with and without a GRH, with a burst of 2: a second bucket", prefix, answered)
		}
		if d := r.a.Stats().Drops[DropRateLimited]; d != 4-uint64(answered) {
			t.Errorf("prefix %#x: %d rate-limited drops counted, %d requests unanswered", prefix, d, 4-answered)
		}
		// The log says it once, naming the requester by its LID.
		if got := logs.lines(); len(got) != 1 || !strings.Contains(got[0], "over the agent's rate limit") || !strings.Contains(got[0], "requester=lid 9") {
			t.Errorf("prefix %#x: log %q, want one line saying lid 9 went over the rate limit", prefix, got)
		}
		r.clk.Add(time.Second)
		if !ask(false) {
			t.Fatalf("prefix %#x: the bucket did not refill", prefix)
		}
		if got := logs.lines(); len(got) != 2 || !strings.Contains(got[1], "back within") || !strings.Contains(got[1], "dropped=2") {
			t.Errorf("prefix %#x: log %q, want a second line saying lid 9 is back within its limit after 2 drops", prefix, got)
		}
	}
}

// logLines collects what a Log func is told, one line per call.
type logLines struct {
	mu sync.Mutex
	l  []string
}

func (l *logLines) log(msg string, kv ...any) {
	var b strings.Builder
	b.WriteString(msg)
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " %v=%v", kv[i], kv[i+1])
	}
	l.mu.Lock()
	l.l = append(l.l, b.String())
	l.mu.Unlock()
}

func (l *logLines) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.l...)
}

// newRigOnPort runs an agent on a fake transport of port attrs that
// captures what it sends.
func newRigOnPort(t *testing.T, attrs ibmad.PortAttributes, cfg Config) *rig {
	r := &rig{t: t, out: make(chan *ibmad.Packet, 64), clk: fakeclock.New(time.Unix(1700000000, 0))}
	r.tr = madtest.New(func(p *ibmad.Packet) []*ibmad.Packet {
		cp := *p
		r.out <- &cp
		return nil
	})
	r.tr.Attrs = attrs
	r.e = ibmad.NewEngine(r.tr, ibmad.Options{})
	t.Cleanup(func() { r.e.Close() })
	cfg.Clock = r.clk
	a, err := New(r.e, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.a = a
	return r
}

// heldSends holds every reply the engine sends until release is closed,
// as a kernel write that blocks (address resolution) does.
type heldSends struct {
	*madtest.Transport
	release chan struct{}
}

func (h *heldSends) Send(p *ibmad.Packet) error {
	if p.MAD.Method().IsResponse() {
		<-h.release
	}
	return h.Transport.Send(p)
}

// TestBurstDoesNotStarveOtherRequesters: one requester's burst, within
// its rate limit (the default burst of 400, more than the engine's reply
// queue holds), sent while the replies cannot leave, does not make
// another requester's reply drop: that reply goes out among the first
// sent once they can, and what the burst loses is counted.
func TestBurstDoesNotStarveOtherRequesters(t *testing.T) {
	const burst = 400
	out := make(chan *ibmad.Packet, 2*burst)
	mt := madtest.New(func(p *ibmad.Packet) []*ibmad.Packet {
		cp := *p
		out <- &cp
		return nil
	})
	mt.Attrs = ibmad.PortAttributes{CA: "fake", PortNum: 1, NodeType: ibmad.NodeTypeCA, NodeGUID: 0x1111, PortGUID: 0x1112, LID: 42}
	tr := &heldSends{Transport: mt, release: make(chan struct{})}
	released := false
	logs := &logLines{}
	e := ibmad.NewEngine(tr, ibmad.Options{Log: logs.log})
	t.Cleanup(func() {
		if !released {
			close(tr.release)
		}
		e.Close()
	})
	a, err := New(e, Config{Clock: fakeclock.New(time.Unix(1700000000, 0))}) // the defaults: 200/s, burst 400
	if err != nil {
		t.Fatal(err)
	}
	inject := func(lid uint16, tid uint64) {
		v := ibmad.NewVendorGet(ibmad.ClassIBTracer, ibmad.OUIOpenIB, ibmad.AttrClassPortInfo, 0)
		v.TID = tid
		p := &ibmad.Packet{Addr: ibmad.Address{LID: lid, QPN: 1}, InPort: 1, InPortKnown: true}
		_ = v.MarshalTo(p.MAD[:])
		mt.Inject(p)
	}
	for i := range burst {
		inject(9, uint64(0x1000+i))
	}
	const other = 0xb0b
	inject(10, other)
	for deadline := time.Now().Add(10 * time.Second); e.Stats().Received < burst+1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the engine received %d of %d requests", e.Stats().Received, burst+1)
		}
	}
	if d := a.Stats().Drops[DropRateLimited]; d != 0 {
		t.Fatalf("%d of the burst's requests were over the rate limit: the burst is meant to be within it", d)
	}
	close(tr.release)
	released = true
	sent, position := 0, 0
	for {
		select {
		case p := <-out:
			sent++
			if p.MAD.TID() != other {
				continue
			}
			position = sent
			if p.Addr.LID != 10 {
				t.Fatalf("the other requester's reply went to LID %d", p.Addr.LID)
			}
			// Its place among the sent depends on the scheduler once the
			// sends are released (the worker holding it may run last), so
			// only that it was sent, not dropped, is asserted here; the
			// queue's turn order is TestReplyQueueLongestLoses's (ibmad).
		case <-time.After(5 * time.Second):
			t.Fatalf("the other requester's reply never went out (%d replies sent, engine drops %v)", sent, e.Stats().Drops)
		}
		break
	}
	// Every request of the burst is answered or its reply dropped and counted.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		st := e.Stats()
		dropped := st.Drops[ibmad.DropReplyQueueFull]
		if uint64(sent+len(out))+dropped == burst+1 {
			if dropped == 0 {
				t.Fatalf("all %d replies were sent: the sends were not held long enough to fill the queue", burst+1)
			}
			t.Logf("the other requester's reply went out %s of %d; %d of the burst's replies dropped", ordinal(position), sent+len(out), dropped)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d replies sent, %d dropped as reply_queue_full: %d requests unaccounted for",
				sent+len(out), dropped, burst+1-uint64(sent+len(out))-dropped)
		}
	}
	// The log says when the queue began to drop, whose, and how many
	// when it was empty again.
	for deadline := time.Now().Add(10 * time.Second); len(logs.lines()) < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("log %q: want the first drop and the count when the queue empties", logs.lines())
		}
	}
	got, dropped := logs.lines(), e.Stats().Drops[ibmad.DropReplyQueueFull]
	if len(got) != 2 || !strings.Contains(got[0], "reply queue is full") || !strings.Contains(got[0], "requester=lid 9") ||
		!strings.Contains(got[1], fmt.Sprintf("replies_dropped=%d", dropped)) {
		t.Fatalf("log %q: want the first drop (lid 9's) and the %d dropped when the queue empties", got, dropped)
	}
}

func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}
