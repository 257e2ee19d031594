package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// lossClient is an engine whose timeout no test waits out: with
// ReportLoss, a lost MAD must come back as the fabric's report.
func lossClient(t *testing.T, f *Fabric, node string) *client {
	t.Helper()
	tr, err := f.Attach(node, 0)
	if err != nil {
		t.Fatal(err)
	}
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 10 * time.Minute, NoRetry: true})
	t.Cleanup(func() { e.Close() })
	return &client{t: t, tr: tr, e: e}
}

// lossPatterns sends n NodeInfo Gets from hostA and from switch s1 to
// hostB and hostC across the lossy s2 port 2 of chain-5, each sender and
// destination in its own goroutine when concurrent, one after another
// otherwise, and returns which were lost, per sender and destination.
func lossPatterns(t *testing.T, seed uint64, n int, concurrent bool) map[string]string {
	t.Helper()
	f := mustFabric(t, "chain-5.net", Options{Seed: seed, ReportLoss: true})
	if err := f.SetDropRate("s2", 2, 0.3); err != nil {
		t.Fatal(err)
	}
	senders := map[string]*client{"hostA": lossClient(t, f, "hostA"), "s1": lossClient(t, f, "s1")}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var mu sync.Mutex
	out := map[string]string{}
	run := func(from, to string) {
		lid, _ := f.LIDOf(to, 1)
		c := senders[from]
		var b strings.Builder
		for i := 0; i < n; i++ {
			req := &ibmad.Request{Addr: ibmad.SMPAddress(lid)}
			_ = ibmad.NewLIDGet(ibmad.AttrNodeInfo, 0).MarshalTo(req.MAD[:])
			var resp ibmad.Response
			err := c.e.Do(ctx, req, &resp)
			switch {
			case err == nil:
				b.WriteByte('.')
			case errors.Is(err, ibmad.ErrTimeout) && strings.Contains(err.Error(), "transport reported"):
				b.WriteByte('x')
			default:
				t.Errorf("%s to %s: %v (want an answer, or the fabric's loss report)", from, to, err)
				return
			}
		}
		mu.Lock()
		out[from+">"+to] = b.String()
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for _, from := range []string{"hostA", "s1"} {
		for _, to := range []string{"hostB", "hostC"} {
			if !concurrent {
				run(from, to)
				continue
			}
			wg.Add(1)
			go func() { defer wg.Done(); run(from, to) }()
		}
	}
	wg.Wait()
	return out
}

// TestDropsIndependentOfOrder: a lossy port loses the same MADs whether
// the senders take turns or race each other, at the rate it was given,
// and another seed loses others.
func TestDropsIndependentOfOrder(t *testing.T) {
	const n = 150
	inTurn := lossPatterns(t, 7, n, false)
	racing := lossPatterns(t, 7, n, true)
	other := lossPatterns(t, 8, n, true)
	lost, same := 0, 0
	for k, want := range inTurn {
		if got := racing[k]; got != want {
			t.Errorf("%s: racing senders lost\n%s\nsenders in turn\n%s", k, got, want)
		}
		lost += strings.Count(want, "x")
		if other[k] == want {
			same++
		}
	}
	if len(inTurn) != 4 {
		t.Fatalf("patterns of %d sender-destination pairs, want 4", len(inTurn))
	}
	// 600 sendings at 30 %: 180 expected, 3 standard deviations either way.
	if lost < 147 || lost > 213 {
		t.Errorf("lost %d of %d at a 30%% drop rate", lost, 4*n)
	}
	if same == len(inTurn) {
		t.Error("seeds 7 and 8 lost the same MADs")
	}
}

// TestReportLoss: what the fabric loses comes back at once as a timeout
// report, a request on a dead link as a lost answer; without ReportLoss
// the requester waits for its own timeout.
func TestReportLoss(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(f *Fabric) error
	}{
		{"dead link", func(f *Fabric) error { return f.SetLinkState("s2", 2, false, false) }},
		{"request dropped", func(f *Fabric) error { return f.SetDropRate("s2", 2, 1) }},
		{"answer dropped", func(f *Fabric) error { return f.SetDropRate("s3", 1, 1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := mustFabric(t, "chain-5.net", Options{ReportLoss: true})
			a, b := lossClient(t, f, "hostA"), lossClient(t, f, "hostB")
			b.serveIngress()
			if err := tc.fault(f); err != nil {
				t.Fatal(err)
			}
			lid, _ := f.LIDOf("hostB", 1)
			before := f.MADs()
			_, err := a.vendorGet(lid)
			if !errors.Is(err, ibmad.ErrTimeout) || !strings.Contains(err.Error(), "transport reported no response") {
				t.Fatalf("got %v, want the fabric's loss report", err)
			}
			// The answer was sent (2 MADs) only when it is the answer that was lost.
			if got, want := f.MADs()-before, map[bool]uint64{true: 2, false: 1}[tc.name == "answer dropped"]; got != want {
				t.Errorf("%d MADs entered the fabric, want %d", got, want)
			}
		})
	}
	t.Run("off", func(t *testing.T) {
		f := mustFabric(t, "chain-5.net", Options{})
		c := attach(t, f, "hostA") // a 50 ms timeout
		if err := f.SetLinkState("s2", 2, false, false); err != nil {
			t.Fatal(err)
		}
		lid, _ := f.LIDOf("hostB", 1)
		_, err := c.lidNodeInfo(lid)
		if !errors.Is(err, ibmad.ErrTimeout) || strings.Contains(err.Error(), "transport reported") {
			t.Fatalf("got %v, want the engine's own timeout", err)
		}
	})
}

func ExampleOptions_reportLoss() {
	topo, _ := FatTree2(2, 1, 1, 1)
	f, _ := New(topo, Options{ReportLoss: true, Seed: 1})
	tr, _ := f.Attach("H0-0", 0)
	// A timeout far longer than any scheduling delay: only what the
	// fabric loses times out, and it says so at once.
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: time.Hour, NoRetry: true})
	defer e.Close()
	_ = f.SetDropRate("L0", 2, 1) // L0's uplink to the spine loses everything
	lid, _ := f.LIDOf("H1-0", 1)
	req := &ibmad.Request{Addr: ibmad.SMPAddress(lid)}
	_ = ibmad.NewLIDGet(ibmad.AttrNodeInfo, 0).MarshalTo(req.MAD[:])
	var resp ibmad.Response
	err := e.Do(context.Background(), req, &resp)
	fmt.Println(errors.Is(err, ibmad.ErrTimeout))
	// Output: true
}
