package main

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-kit/log/level"
	"github.com/go-logfmt/logfmt"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/ibtracer/ibtracer_exporter/internal/syncbuf"
	"github.com/ibtracer/ibtracer_exporter/internal/webserve"
)

// toolkitLines starts exporter-toolkit's web server on a loopback port with
// the slog bridge of newLoggers, waits for its "Listening on" line, stops
// it, and returns every line logged (the exporter's own first).
func toolkitLines(t *testing.T, format string) []string {
	t.Helper()
	var buf syncbuf.Buffer // written by the server goroutine, read by the test
	logger, slogger := newLoggers(&buf, "info", format)
	level.Info(logger).Log("msg", "own line")
	addrs := []string{"127.0.0.1:0"}
	cfgFile := ""
	srv := &http.Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: time.Second}
	done := make(chan error, 1)
	go func() {
		done <- web.ListenAndServe(srv, &web.FlagConfig{WebListenAddresses: &addrs, WebConfigFile: &cfgFile}, slogger)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(buf.String(), "TLS is disabled") {
		if time.Now().After(deadline) {
			t.Fatalf("no toolkit line within 30s; got:\n%s", buf.String())
		}
		select {
		case err := <-done:
			t.Fatalf("server ended: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	_ = srv.Close()
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) < 2 {
		t.Fatalf("want the exporter's line and the toolkit's, got:\n%s", buf.String())
	}
	return lines
}

// A line from the web toolkit carries exactly one timestamp (ts, as the
// exporter's own lines) and one caller, naming the toolkit's file.
func TestToolkitLogLineHasOneTimestampAndCaller(t *testing.T) {
	for _, line := range toolkitLines(t, "logfmt") {
		count := map[string]int{}
		vals := map[string]string{}
		d := logfmt.NewDecoder(strings.NewReader(line))
		for d.ScanRecord() {
			for d.ScanKeyval() {
				count[string(d.Key())]++
				vals[string(d.Key())] = string(d.Value())
			}
		}
		if err := d.Err(); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if count["ts"] != 1 || count["caller"] != 1 || count["time"] != 0 || count["level"] != 1 {
			t.Errorf("%q: want one ts, one caller, one level and no time, got %v", line, count)
		}
		if _, err := time.Parse(time.RFC3339Nano, vals["ts"]); err != nil {
			t.Errorf("%q: ts: %v", line, err)
		}
		if strings.Contains(vals["caller"], "handler.go") || strings.Contains(vals["caller"], "logging.go") {
			t.Errorf("%q: caller %q names the bridge, not the call site", line, vals["caller"])
		}
		if strings.Contains(line, "TLS is disabled") && !strings.HasPrefix(vals["caller"], "tls_config.go:") {
			t.Errorf("%q: caller %q, want the toolkit's tls_config.go", line, vals["caller"])
		}
	}
}

func TestToolkitJSONLogLineHasOneTimestamp(t *testing.T) {
	for _, line := range toolkitLines(t, "json") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if _, ok := m["time"]; ok {
			t.Errorf("%q: a time key beside ts", line)
		}
		if m["ts"] == nil || m["caller"] == nil {
			t.Errorf("%q: want ts and caller", line)
		}
	}
}

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
	srv := webserve.NewServer(http.NotFoundHandler(), webserve.DefaultLimits, logger)
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
