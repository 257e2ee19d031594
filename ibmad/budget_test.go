package ibmad_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
)

// runBudget sends one request per entry of targets at once through an
// engine with budget b, driving the manual clock until all are answered,
// and returns the (fake) send time of each attempt by target.
func runBudget(t *testing.T, b ibmad.Budget, targets []uint16) (map[uint16][]time.Time, *ibmad.Engine) {
	t.Helper()
	clk := fakeclock.New(time.Unix(1800000000, 0))
	b.Clock = clk
	var mu sync.Mutex
	sent := map[uint16][]time.Time{}
	tr := madtest.New(func(p *ibmad.Packet) []*ibmad.Packet {
		mu.Lock()
		sent[p.Addr.LID] = append(sent[p.Addr.LID], clk.Now())
		mu.Unlock()
		return madtest.Echo(p)
	})
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 10 * time.Second, MaxOutstanding: 1024, MaxPerTarget: 1024})
	t.Cleanup(func() { e.Close() })
	e.SetBudget(b)
	var done atomic.Int32
	errs := make(chan error, len(targets))
	for _, lid := range targets {
		go func(lid uint16) {
			errs <- e.Do(context.Background(), nodeInfoReq(lid), &ibmad.Response{})
			done.Add(1)
		}(lid)
	}
	deadline := time.Now().Add(30 * time.Second)
	for int(done.Load()) < len(targets) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d requests answered", done.Load(), len(targets))
		}
		// Time moves only once every request is answered or waits on the
		// clock.
		if n := clk.Pending(); n == 0 || n+int(done.Load()) < len(targets) {
			time.Sleep(time.Millisecond) // polling, not synchronisation: the loop re-checks the state
			continue
		}
		clk.Advance()
	}
	for range targets {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	return sent, e
}

// maxInWindow is the most sends within any window of length w.
func maxInWindow(ts []time.Time, w time.Duration) int {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	most := 0
	for i := range ts {
		n := 0
		for j := i; j < len(ts) && ts[j].Sub(ts[i]) < w; j++ {
			n++
		}
		if n > most {
			most = n
		}
	}
	return most
}

// 100 requests at once under mad_rate 20/s: no second sees more than the
// rate plus the burst (a tenth of a second of it), and all are sent
// within the time the rate needs.
func TestBudgetEngineRate(t *testing.T) {
	targets := make([]uint16, 100)
	for i := range targets {
		targets[i] = uint16(1 + i%7)
	}
	sent, e := runBudget(t, ibmad.Budget{Rate: 20}, targets)
	var all []time.Time
	for _, ts := range sent {
		all = append(all, ts...)
	}
	if len(all) != 100 {
		t.Fatalf("%d sent", len(all))
	}
	if n := maxInWindow(all, time.Second); n > 20+2 {
		t.Fatalf("%d MADs within one second, want at most 22 (rate 20 + burst 2)", n)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Before(all[j]) })
	if span := all[len(all)-1].Sub(all[0]); span < 4*time.Second || span > 5*time.Second {
		t.Fatalf("100 MADs at 20/s took %v, want about 4.9s", span)
	}
	st := e.BudgetStats()
	if st.Rate != 20 || st.Waits < 90 || st.Expired != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// Per target: 5/s to each node, 200/s in all: one node's requests are
// paced, another's are not held behind them.
func TestBudgetPerTarget(t *testing.T) {
	var targets []uint16
	for i := 0; i < 20; i++ {
		targets = append(targets, 3, 4)
	}
	sent, _ := runBudget(t, ibmad.Budget{Rate: 200, PerTarget: 5}, targets)
	for _, lid := range []uint16{3, 4} {
		ts := sent[lid]
		if len(ts) != 20 {
			t.Fatalf("LID %d: %d sent", lid, len(ts))
		}
		if n := maxInWindow(ts, time.Second); n > 5+1 {
			t.Fatalf("LID %d: %d MADs within one second, want at most 6", lid, n)
		}
		if span := ts[len(ts)-1].Sub(ts[0]); span > 4*time.Second {
			t.Fatalf("LID %d: 20 MADs at 5/s took %v: held behind the other target", lid, span)
		}
	}
}

// A request waiting for the budget ends with its context, gives its
// token back, and counts as expired.
func TestBudgetWaitEndsWithContext(t *testing.T) {
	clk := fakeclock.New(time.Unix(1800000000, 0))
	tr := madtest.New(madtest.Echo)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: time.Second})
	defer e.Close()
	e.SetBudget(ibmad.Budget{Rate: 1, Clock: clk})
	if err := e.Do(context.Background(), nodeInfoReq(2), &ibmad.Response{}); err != nil {
		t.Fatal(err) // the burst's one token
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- e.Do(ctx, nodeInfoReq(2), &ibmad.Response{}) }()
	deadline := time.Now().Add(10 * time.Second)
	for e.BudgetStats().Waits == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the request never waited")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if st := e.BudgetStats(); st.Expired != 1 {
		t.Fatalf("stats %+v, want 1 expired", st)
	}
	if n := tr.Sent.Load(); n != 1 {
		t.Fatalf("%d sent, want 1", n)
	}
	// The token came back: one second later one request goes at once.
	clk.Add(time.Second)
	if err := e.Do(context.Background(), nodeInfoReq(2), &ibmad.Response{}); err != nil {
		t.Fatal(err)
	}
	if st := e.BudgetStats(); st.Waits != 1 {
		t.Fatalf("stats %+v: the request after the refill waited", st)
	}
}
