package webserve

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// server serves h on a loopback listener wrapped by lim; idle receives
// each connection's remote address when it turns idle between requests.
func server(t *testing.T, lim *ConnLimiter, h http.Handler) (addr string, idle <-chan string, srv *http.Server, served <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan string, 16)
	srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ConnState: func(c net.Conn, s http.ConnState) {
		// The test hears of a connection turning idle before the limiter
		// does: a connection the limiter admits in return (and that
		// turns idle in its turn) cannot be reported first.
		if s == http.StateIdle {
			ch <- c.RemoteAddr().String()
		}
		lim.ConnState(c, s)
	}}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lim.Listen(ln)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String(), ch, srv, done
}

// client is one keep-alive connection.
type client struct {
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{c: c, r: bufio.NewReader(c)}
}

// get sends a request and reads the answer, within d.
func (c *client) get(d time.Duration) (int, error) {
	_ = c.c.SetDeadline(time.Now().Add(d))
	if _, err := fmt.Fprintf(c.c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

func waitIdle(t *testing.T, idle <-chan string, c *client) {
	t.Helper()
	select {
	case a := <-idle:
		if a != c.c.LocalAddr().String() {
			t.Fatalf("%s turned idle, want %s", a, c.c.LocalAddr())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not turn idle")
	}
}

// At the limit, a new connection is admitted by closing the connection
// idle longest; the other idle one keeps working.
func TestClosesLongestIdleToMakeRoom(t *testing.T) {
	lim := NewConnLimiter(2)
	var evicted []uint64
	lim.OnEvict = func(n uint64) { evicted = append(evicted, n) }
	addr, idle, _, _ := server(t, lim, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") }))
	c1 := dial(t, addr)
	if code, err := c1.get(5 * time.Second); err != nil || code != 200 {
		t.Fatal(code, err)
	}
	waitIdle(t, idle, c1)
	c2 := dial(t, addr)
	if code, err := c2.get(5 * time.Second); err != nil || code != 200 {
		t.Fatal(code, err)
	}
	waitIdle(t, idle, c2)
	c3 := dial(t, addr)
	if code, err := c3.get(5 * time.Second); err != nil || code != 200 {
		t.Fatalf("a new connection beside %d idle ones at a limit of %d: %d %v", 2, lim.Max(), code, err)
	}
	_ = c1.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c1.r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("the connection idle longest: read %v, want EOF (closed to make room)", err)
	}
	if code, err := c2.get(5 * time.Second); err != nil || code != 200 {
		t.Errorf("the other idle connection: %d %v, want it kept", code, err)
	}
	if lim.Evicted() != 1 || len(evicted) != 1 || evicted[0] != 1 || lim.Open() != 2 {
		t.Errorf("evicted %d (hook %v), open %d; want 1, [1], 2", lim.Evicted(), evicted, lim.Open())
	}
}

// At the limit with no connection idle, a new connection waits; when the
// busy one turns idle it is closed and the new one served. Closing the
// server ends an Accept that waits.
func TestWaitsWhileAllAreBusy(t *testing.T) {
	lim := NewConnLimiter(1)
	entered, release, release2 := make(chan struct{}, 4), make(chan struct{}), make(chan struct{})
	defer close(release2)
	addr, idle, srv, served := server(t, lim, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		switch r.URL.Query().Get("hold") {
		case "1":
			<-release
		case "2":
			<-release2
		}
		_, _ = io.WriteString(w, "ok\n")
	}))
	busy := dial(t, addr)
	got := make(chan error, 1)
	go func() {
		_ = busy.c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(busy.c, "GET /?hold=1 HTTP/1.1\r\nHost: x\r\n\r\n")
		_, err := http.ReadResponse(busy.r, nil)
		got <- err
	}()
	<-entered
	next := dial(t, addr)
	answered := make(chan error, 1)
	go func() { _, err := next.get(10 * time.Second); answered <- err }()
	select {
	case <-entered:
		t.Fatal("a second connection was served at a limit of 1 while the first was busy")
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	waitIdle(t, idle, busy)
	if err := <-answered; err != nil {
		t.Fatalf("the waiting connection: %v", err)
	}
	if lim.Evicted() != 1 {
		t.Errorf("evicted %d, want 1", lim.Evicted())
	}
	// A connection busy again, one more waiting to be admitted: closing
	// the server ends the wait.
	hold := dial(t, addr)
	go func() { fmt.Fprintf(hold.c, "GET /?hold=2 HTTP/1.1\r\nHost: x\r\n\r\n") }()
	<-entered // next was closed to admit hold, which is busy now
	_ = dial(t, addr)
	_ = srv.Close()
	select {
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after Close")
	}
}

// A keep-alive connection idle between requests is closed before one that
// has not sent its first request yet, even a longer-waiting one: that one
// may be a scrape whose request has not been read yet (a new connection
// that never sends one is bounded by the server's ReadHeaderTimeout).
func TestPrefersIdleToNew(t *testing.T) {
	lim := NewConnLimiter(2)
	addr, idle, _, _ := server(t, lim, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") }))
	quiet := dial(t, addr) // connected, no request yet
	kept := dial(t, addr)
	if code, err := kept.get(5 * time.Second); err != nil || code != 200 {
		t.Fatal(code, err)
	}
	waitIdle(t, idle, kept)
	c3 := dial(t, addr)
	if code, err := c3.get(5 * time.Second); err != nil || code != 200 {
		t.Fatalf("a new connection at the limit: %d %v", code, err)
	}
	_ = kept.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := kept.r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("the idle keep-alive connection: read %v, want EOF (closed to make room)", err)
	}
	if code, err := quiet.get(5 * time.Second); err != nil || code != 200 {
		t.Errorf("the new connection that waited longer: %d %v, want it kept and served", code, err)
	}
}
