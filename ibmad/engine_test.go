package ibmad_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
)

func nodeInfoReq(lid uint16) *ibmad.Request {
	req := &ibmad.Request{Addr: ibmad.SMPAddress(lid)}
	s := ibmad.NewLIDGet(ibmad.AttrNodeInfo, 0)
	_ = s.MarshalTo(req.MAD[:])
	return req
}

func TestEngineRoundTrip(t *testing.T) {
	tr := madtest.New(madtest.Echo)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: time.Second})
	defer e.Close()
	var resp ibmad.Response
	if err := e.Do(context.Background(), nodeInfoReq(5), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.MAD.Method() != ibmad.MethodGetResp || resp.MAD.AttrID() != ibmad.AttrNodeInfo || resp.Attempts != 1 {
		t.Fatalf("got method %s attr %#x attempts %d", resp.MAD.Method(), resp.MAD.AttrID(), resp.Attempts)
	}
	if resp.MAD.TIDLow() == 0 {
		t.Fatal("engine sent TID 0")
	}
}

func TestEngineTimeoutAfterRetries(t *testing.T) {
	tr := madtest.New(nil) // drops everything
	e := ibmad.NewEngine(tr, ibmad.Options{})
	defer e.Close()
	req := nodeInfoReq(7)
	req.Timeout, req.Retries = 20*time.Millisecond, 2
	start := time.Now()
	err := e.Do(context.Background(), req, &ibmad.Response{})
	took := time.Since(start)
	if !errors.Is(err, ibmad.ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	if n := tr.Sent.Load(); n != 3 {
		t.Errorf("sent %d attempts, want 3", n)
	}
	if took < 60*time.Millisecond || took > 2*time.Second {
		t.Errorf("took %v, want about 3 x 20ms", took)
	}
	st := e.Stats()
	if len(st.Classes) != 1 || st.Classes[0].Class != ibmad.ClassSubnLID || st.Classes[0].Requests != 3 ||
		st.Classes[0].Timeouts != 3 || st.Classes[0].Retries != 2 {
		t.Errorf("stats %+v", st.Classes)
	}
	if st.Outstanding != 0 {
		t.Errorf("outstanding %d after return", st.Outstanding)
	}
}

func TestEngineRetrySucceeds(t *testing.T) {
	var n atomic.Int32
	tr := madtest.New(func(p *ibmad.Packet) []*ibmad.Packet {
		if n.Add(1) == 1 {
			return nil // first attempt lost
		}
		return madtest.Echo(p)
	})
	e := ibmad.NewEngine(tr, ibmad.Options{})
	defer e.Close()
	req := nodeInfoReq(7)
	req.Timeout, req.Retries = 20*time.Millisecond, 3
	var resp ibmad.Response
	if err := e.Do(context.Background(), req, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 2 {
		t.Fatalf("attempts %d, want 2", resp.Attempts)
	}
}

func TestEngineLateAnswerToEarlierAttempt(t *testing.T) {
	var mu sync.Mutex
	var first *ibmad.Packet
	var tr *madtest.Transport
	tr = madtest.New(func(p *ibmad.Packet) []*ibmad.Packet {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			r := madtest.Echo(p)[0]
			first = r
			// Answer the first attempt after its timer expired, during the second.
			time.AfterFunc(150*time.Millisecond, func() { tr.Inject(r) })
		}
		return nil
	})
	e := ibmad.NewEngine(tr, ibmad.Options{})
	defer e.Close()
	req := nodeInfoReq(9)
	req.Timeout, req.Retries = 100*time.Millisecond, 1 // the answer comes at 150 ms, during the second attempt
	var resp ibmad.Response
	if err := e.Do(context.Background(), req, &resp); err != nil {
		t.Fatalf("late answer did not complete the request: %v", err)
	}
	if resp.Attempts != 2 || resp.MAD.TIDLow() != first.MAD.TIDLow() {
		t.Fatalf("attempts %d", resp.Attempts)
	}
}

func TestEngineTimeoutReportRetriesAtOnce(t *testing.T) {
	var n atomic.Int32
	tr := madtest.New(func(p *ibmad.Packet) []*ibmad.Packet {
		if n.Add(1) == 1 {
			r := *p
			r.TimedOut = true // the kernel gave up on this send
			return []*ibmad.Packet{&r}
		}
		return madtest.Echo(p)
	})
	e := ibmad.NewEngine(tr, ibmad.Options{})
	defer e.Close()
	req := nodeInfoReq(3)
	req.Timeout, req.Retries = 5*time.Second, 1
	start := time.Now()
	var resp ibmad.Response
	if err := e.Do(context.Background(), req, &resp); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > time.Second || resp.Attempts != 2 {
		t.Fatalf("took %v, attempts %d: the timeout report should trigger the retry", time.Since(start), resp.Attempts)
	}
}

func TestEngineDropsUnknownTIDAndMalformed(t *testing.T) {
	tr := madtest.New(nil)
	e := ibmad.NewEngine(tr, ibmad.Options{})
	defer e.Close()
	var stray ibmad.Packet
	s := ibmad.NewLIDGet(ibmad.AttrNodeInfo, 0)
	s.Method = ibmad.MethodGetResp
	s.TID = 0xdeadbeef
	_ = s.MarshalTo(stray.MAD[:])
	tr.Inject(&stray)
	var bad ibmad.Packet
	bad.MAD[0] = 7 // base version 7
	tr.Inject(&bad)
	var junk ibmad.Packet
	for i := range junk.MAD {
		junk.MAD[i] = 0xff
	}
	tr.Inject(&junk)
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		st := e.Stats()
		if st.Drops[ibmad.DropUnknownTID] == 1 && st.Drops[ibmad.DropMalformed] == 2 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("drops %v", e.Stats().Drops)
}

func TestEngineCloseReleasesWaiters(t *testing.T) {
	tr := madtest.New(nil)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: time.Minute, MaxOutstanding: 2})
	errs := make(chan error, 5)
	for i := 0; i < 5; i++ { // 2 in flight, 3 waiting for the window
		go func(i int) { errs <- e.Do(context.Background(), nodeInfoReq(uint16(10+i)), &ibmad.Response{}) }(i)
	}
	time.Sleep(50 * time.Millisecond)
	e.Close()
	for i := 0; i < 5; i++ {
		select {
		case err := <-errs:
			if !errors.Is(err, ibmad.ErrClosed) {
				t.Errorf("waiter %d: %v, want ErrClosed", i, err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("a waiter is still blocked after Close")
		}
	}
	if err := e.Do(context.Background(), nodeInfoReq(1), &ibmad.Response{}); !errors.Is(err, ibmad.ErrClosed) {
		t.Fatalf("Do after Close: %v", err)
	}
}

func TestEngineContextCancel(t *testing.T) {
	e := ibmad.NewEngine(madtest.New(nil), ibmad.Options{Timeout: time.Minute})
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := e.Do(ctx, nodeInfoReq(1), &ibmad.Response{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
}

func TestEngineWindows(t *testing.T) {
	for _, tc := range []struct {
		name              string
		global, perTarget int
		lids              []uint16
		wantMax           int64
	}{
		{"global", 3, 16, []uint16{1, 2, 3, 4, 5, 6, 7, 8}, 3},
		{"per-target", 64, 2, []uint16{9, 9, 9, 9, 9, 9}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var inFlight, max atomic.Int64
			var tr *madtest.Transport
			tr = madtest.New(func(p *ibmad.Packet) []*ibmad.Packet {
				n := inFlight.Add(1)
				for {
					m := max.Load()
					if n <= m || max.CompareAndSwap(m, n) {
						break
					}
				}
				r := madtest.Echo(p)[0]
				time.AfterFunc(10*time.Millisecond, func() { inFlight.Add(-1); tr.Inject(r) })
				return nil
			})
			e := ibmad.NewEngine(tr, ibmad.Options{MaxOutstanding: tc.global, MaxPerTarget: tc.perTarget})
			defer e.Close()
			var wg sync.WaitGroup
			for _, lid := range tc.lids {
				wg.Add(1)
				go func(lid uint16) {
					defer wg.Done()
					if err := e.Do(context.Background(), nodeInfoReq(lid), &ibmad.Response{}); err != nil {
						t.Error(err)
					}
				}(lid)
			}
			wg.Wait()
			if max.Load() != tc.wantMax {
				t.Fatalf("at most %d MADs were in flight, want exactly %d (the window)", max.Load(), tc.wantMax)
			}
		})
	}
}

func TestEngineHandlerDispatch(t *testing.T) {
	tr := madtest.New(nil)
	e := ibmad.NewEngine(tr, ibmad.Options{})
	defer e.Close()
	served := make(chan uint8, 4)
	err := e.Handle(ibmad.ClassIBTracer, 1, ibmad.OUIOpenIB, []ibmad.Method{ibmad.MethodGet}, false,
		func(req, resp *ibmad.Packet) bool {
			served <- req.InPort
			resp.MAD = req.MAD
			resp.MAD.SetMethod(ibmad.MethodGetResp)
			resp.Addr = req.Addr
			return true
		})
	if err != nil {
		t.Fatal(err)
	}
	if regs := tr.Registrations(); len(regs) != 1 || regs[0].OUI != ibmad.OUIOpenIB || regs[0].Class != ibmad.ClassIBTracer {
		t.Fatalf("registrations %+v", regs)
	}
	inject := func(oui ibmad.OUI, port uint8) {
		v := ibmad.NewVendorGet(ibmad.ClassIBTracer, oui, ibmad.AttrSourceRoute, 0)
		v.TID = 42
		p := &ibmad.Packet{Addr: ibmad.GSIAddress(3, 0), InPort: port, InPortKnown: true}
		_ = v.MarshalTo(p.MAD[:])
		tr.Inject(p)
	}
	inject(ibmad.OUIOpenIB, 2)
	inject(0x123456, 1) // another OUI: no handler
	select {
	case port := <-served:
		if port != 2 {
			t.Fatalf("handler saw in-port %d", port)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("handler not called")
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		st := e.Stats()
		if st.Responses == 1 && st.Drops[ibmad.DropNoHandler] == 1 && tr.Sent.Load() == 1 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("responses %d drops %v sent %d", e.Stats().Responses, e.Stats().Drops, tr.Sent.Load())
}

func TestEngineSendError(t *testing.T) {
	tr := madtest.New(madtest.Echo)
	boom := errors.New("boom")
	tr.SendErr.Store(&boom)
	e := ibmad.NewEngine(tr, ibmad.Options{})
	defer e.Close()
	req := nodeInfoReq(1)
	req.Retries = 1
	err := e.Do(context.Background(), req, &ibmad.Response{})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	lost := ibmad.ErrDeviceLost
	tr.SendErr.Store(&lost)
	if err := e.Do(context.Background(), req, &ibmad.Response{}); !errors.Is(err, ibmad.ErrDeviceLost) {
		t.Fatalf("got %v", err)
	}
}
