package webserve

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestCutSparesTheNextKeepAliveAnswer runs TestCutNeverTouchesAFinishedAnswer's
// race through net/http, on a loopback server with the exporter's write
// timeout. Client A asks for a large answer (a1) and does not read, so
// its handler blocks in Write; client B's answer then exceeds the budget
// and picks a1 to cut. Where B's begin has released the lock (the
// picked hook), client A reads what it can of a1; if a1 arrived whole
// (it was not cut yet), A sends its next request (a2) on the same
// keep-alive connection, whose handler waits until B's answer has
// begun. a2 was never picked: it must arrive whole. The one answer
// counted cut must be one its client got short.
func TestCutSparesTheNextKeepAliveAnswer(t *testing.T) {
	// Far more than the socket buffers on a1's way, which the test makes
	// small (whatever the host's defaults and autotuning): a1's Write blocks.
	const big, sockBuf = 32 << 20, 64 << 10
	var (
		a1Begun  = make(chan struct{})
		a1Done   = make(chan struct{})
		a2Render = make(chan struct{})
		release  = make(chan struct{})
		connA    net.Conn
		readA    *bufio.Reader
		a1Whole  bool
		a2Sent   bool
		calls    int
		mu       sync.Mutex
		failure  error
	)
	fatal := func(err error) { // from the hook: reported by the test's goroutine
		mu.Lock()
		if failure == nil {
			failure = err
		}
		mu.Unlock()
	}
	wait := func(ch chan struct{}, what string) bool {
		select {
		case <-ch:
			return true
		case <-time.After(30 * time.Second):
			fatal(fmt.Errorf("%s did not happen", what))
			return false
		}
	}
	s := &SendBudget{budget: big + big/2, logger: log.NewNopLogger(), cut: prometheus.NewCounter(prometheus.CounterOpts{Name: "cut"})}
	s.picked = func() {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		switch n {
		case 1: // a1's begin
			close(a1Begun)
		case 2: // B's begin, once it has picked a1 and released the lock
			resp, err := http.ReadResponse(readA, nil)
			if err == nil {
				var got int64
				got, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				a1Whole = err == nil && got == big
				mu.Unlock()
			}
			mu.Lock()
			whole := a1Whole
			mu.Unlock()
			if !wait(a1Done, "a1's handler returning") || !whole {
				return
			}
			if _, err := io.WriteString(connA, "GET /small HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
				fatal(fmt.Errorf("a2 on a1's connection: %w", err))
				return
			}
			mu.Lock()
			a2Sent = true
			mu.Unlock()
			wait(a2Render, "a2's handler starting")
		}
	}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/small" {
			close(a2Render)
			<-release
			_, _ = io.WriteString(w, "a2")
			return
		}
		_, _ = w.Write(make([]byte, big))
	})
	render := sendWhole(s, inner)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		render.ServeHTTP(w, r)
		if r.Header.Get("X-Answer") == "a1" {
			close(a1Done)
		}
	}))
	srv.Config.WriteTimeout = time.Minute // the exporter's default (server.go)
	srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
		if tc, ok := c.(*net.TCPConn); ok && st == http.StateNew {
			_ = tc.SetWriteBuffer(sockBuf)
		}
	}
	srv.Start()
	defer srv.Close()
	rel := sync.OnceFunc(func() { close(release) })
	defer rel() // before srv.Close, which waits for a2's handler

	var err error
	if connA, err = net.Dial("tcp", srv.Listener.Addr().String()); err != nil {
		t.Fatal(err)
	}
	if err := connA.(*net.TCPConn).SetReadBuffer(sockBuf); err != nil {
		t.Fatal(err)
	}
	defer connA.Close()
	readA = bufio.NewReader(connA)
	if _, err := io.WriteString(connA, "GET /big HTTP/1.1\r\nHost: test\r\nX-Answer: a1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if !wait(a1Begun, "a1's begin") {
		t.Fatal(failure)
	}
	respB, err := http.Get(srv.URL + "/big") // B: returns once B's begin is done and its header sent
	if err != nil {
		t.Fatal(err)
	}
	gotB, errB := io.Copy(io.Discard, respB.Body)
	respB.Body.Close()
	rel() // a2 renders and is sent now, after B's begin
	mu.Lock()
	ferr, a1Whole, a2Sent := failure, a1Whole, a2Sent
	mu.Unlock()
	if ferr != nil {
		t.Fatal(ferr)
	}
	if errB != nil || gotB != big {
		t.Fatalf("B, the new answer: %d of %d bytes, %v", gotB, big, errB)
	}
	cut := testutil.ToFloat64(s.cut)
	t.Logf("a1 whole: %v; a2 sent: %v; counted cut: %v", a1Whole, a2Sent, cut)
	if a2Sent {
		resp, err := http.ReadResponse(readA, nil)
		var body []byte
		if err == nil {
			body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if err != nil || string(body) != "a2" {
			t.Fatalf("a2, the next answer on a1's keep-alive connection, never picked, failed: %q, %v (a1 arrived whole; %v answer(s) counted cut)", body, err, cut)
		}
	}
	if cut != 1 {
		t.Fatalf("%v answers counted cut, want a1 (was it still being sent when B began? socket buffers over %d bytes?)", cut, big)
	}
	if a1Whole {
		t.Fatal("a1 arrived whole but was counted cut")
	}
}

// sendWhole renders h into memory and sends the answer within s, as the
// collector's renderFirst does: Begin with the answer's size, then the
// answer with its Content-Length.
func sendWhole(s *SendBudget, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		defer s.Begin(w, int64(len(body)))()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}
