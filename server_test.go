package main

import (
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logfmt/logfmt"

	"github.com/ibtracer/ibtracer_exporter/internal/syncbuf"
)

// failingListener's first Accept fails as accept4 does when the process
// is out of file descriptors; later ones wait until it is closed.
type failingListener struct {
	net.Listener
	failed bool
	closed chan struct{}
}

func (l *failingListener) Accept() (net.Conn, error) {
	if !l.failed {
		l.failed = true
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.Addr(), Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	<-l.closed
	return nil, net.ErrClosed
}

func (l *failingListener) Close() error {
	close(l.closed)
	return l.Listener.Close()
}

// The HTTP server's own errors (here "accept4: too many open files") are
// logged through the exporter's logger, in its format, at error level,
// not in Go's default format on stderr.
func TestServerErrorLogIsOurs(t *testing.T) {
	var buf syncbuf.Buffer
	logger, _ := newLoggers(&buf, "info", "logfmt")
	srv := newServer(http.NotFoundHandler(), defaultWebLimits, logger)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(&failingListener{Listener: ln, closed: make(chan struct{})}) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(buf.String(), "too many open files") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	_ = srv.Close()
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("Serve: %v", err)
	}
	d := logfmt.NewDecoder(strings.NewReader(buf.String()))
	for d.ScanRecord() {
		kv := map[string]string{}
		for d.ScanKeyval() {
			kv[string(d.Key())] = string(d.Value())
		}
		if strings.Contains(kv["err"], "too many open files") {
			if kv["level"] != "error" || kv["ts"] == "" || kv["caller"] == "" || kv["msg"] != "http server" ||
				strings.Contains(kv["err"], "\n") {
				t.Errorf("the server's error line: %q, want level=error, ts, caller, msg=\"http server\" and a one-line err", kv)
			}
			return
		}
	}
	if err := d.Err(); err != nil {
		t.Fatalf("not logfmt: %v\n%s", err, buf.String())
	}
	t.Fatalf("the server's accept error is not in our log; got:\n%s", buf.String())
}

// The flags' timeouts reach the server; turning the read timeout off
// keeps the 10 s bound on the request headers.
func TestServerTimeouts(t *testing.T) {
	for _, c := range []struct {
		w      webLimits
		header time.Duration
	}{
		{defaultWebLimits, 10 * time.Second},
		{webLimits{readTimeout: 3 * time.Second, writeTimeout: 5 * time.Second, idleTimeout: 7 * time.Second}, 3 * time.Second},
		{webLimits{}, 10 * time.Second},
	} {
		srv := newServer(http.NotFoundHandler(), c.w, nil)
		if srv.ReadHeaderTimeout != c.header || srv.ReadTimeout != c.w.readTimeout || srv.WriteTimeout != c.w.writeTimeout ||
			srv.IdleTimeout != c.w.idleTimeout || srv.ErrorLog == nil {
			t.Errorf("%+v: header %v read %v write %v idle %v (error log %v); want header %v", c.w, srv.ReadHeaderTimeout,
				srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout, srv.ErrorLog != nil, c.header)
		}
	}
}
