package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// manyDestinations is a configuration of n destinations over the sim
// fabric's first 20 LIDs, traced once a minute: a /metrics of several MB
// and a /traces of as many, from the start.
func manyDestinations(n int) string {
	var b strings.Builder
	b.WriteString("interval: 60s\ndestinations:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {name: d%d, lid: %d}\n", i, 1+i%20)
	}
	return b.String()
}

// stalledGet sends GET path on a connection with a 4 KiB receive buffer,
// reads the status line (the server has begun its answer) and then reads
// nothing more: a client that never reads the rest. It returns the
// connection and the status line.
func stalledGet(t *testing.T, addr, path string) (net.Conn, string) {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	line := make([]byte, len("HTTP/1.1 200"))
	if _, err := io.ReadFull(c, line); err != nil {
		t.Fatalf("stalled GET %s: no status line: %v", path, err)
	}
	return c, string(line)
}

// Clients that send a request for /metrics or /traces and never read the
// answer, more than either endpoint has slots, do not keep the real
// requests beside them from being answered, at 10,000 destinations: each
// real request gets 200 and its whole body within 5 s while the stalled
// clients stay.
func TestSlowReadersDoNotBlockScrapes(t *testing.T) {
	skipShort(t)
	p := startExporter(t, nil, manyDestinations(10000), "--ib.transport=sim")
	if !poll(30*time.Second, 100*time.Millisecond, func() bool { code, _ := p.get("/-/healthy"); return code == 200 }) {
		t.Fatal("the exporter did not start")
	}
	for _, c := range []struct {
		path    string
		stalled int
	}{{"/metrics", 8}, {"/traces", 8}} {
		served := 0
		for range c.stalled {
			if _, status := stalledGet(t, p.addr, c.path); status == "HTTP/1.1 200" {
				served++
			}
		}
		// A stalled client's answer is rendered until the socket's buffers
		// are full (a few MB, well under a second); meanwhile it counts
		// against the limit like any request that renders. Then it must
		// hold nothing a real request needs, for as long as it stays.
		start := time.Now()
		var code, busy int
		var body string
		poll(5*time.Second, 50*time.Millisecond, func() bool {
			if code, body = p.get(c.path); code == http.StatusServiceUnavailable {
				busy++
			}
			return code != http.StatusServiceUnavailable
		})
		took := time.Since(start)
		t.Logf("%s beside %d clients that do not read (%d of them answered 200): %d, %d bytes after %v (%d answers 503 before)",
			c.path, c.stalled, served, code, len(body), took.Round(time.Millisecond), busy)
		if code != 200 || len(body) < 1<<20 {
			t.Errorf("%s beside %d stalled readers: %d, %d bytes after %v; want 200 and the whole answer within 5 s: %.200s",
				c.path, c.stalled, code, len(body), took.Round(time.Millisecond), body)
		}
	}
}

// Idle keep-alive connections, more than the exporter's open-file limit
// allows (prlimit --nofile=256), do not stop a real scrape: the exporter
// bounds its connections below that limit and closes the connection idle
// longest to make room, counts it, and never logs "too many open files".
func TestIdleConnectionsDoNotStopScrapes(t *testing.T) {
	skipShort(t)
	const fds, idle = 256, 400
	p := startExporterUnder(t, []string{"prlimit", fmt.Sprintf("--nofile=%d:%d", fds, fds)}, nil,
		manyDestinations(10), "--ib.transport=sim")
	if !poll(30*time.Second, 100*time.Millisecond, func() bool { code, _ := p.get("/-/healthy"); return code == 200 }) {
		t.Fatal("the exporter did not start")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	answered := 0
	for range idle {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", p.addr)
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			_ = c.SetDeadline(time.Now().Add(3 * time.Second))
			fmt.Fprintf(c, "GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			answered++
			mu.Unlock()
		}()
	}
	wg.Wait()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	resp, err := client.Get("http://" + p.addr + "/metrics")
	took := time.Since(start)
	if err != nil {
		t.Fatalf("scrape beside %d idle keep-alive connections (%d answered): %v", idle, answered, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("scrape beside %d idle keep-alive connections (%d answered) under %d open files: %d in %v",
		idle, answered, fds, resp.StatusCode, took.Round(time.Millisecond))
	if resp.StatusCode != 200 {
		t.Fatalf("scrape: %d", resp.StatusCode)
	}
	if v, ok := value(string(body), "ibtracer_http_connections_evicted_total"); !ok || v == 0 {
		t.Errorf("idle connections closed to make room: %v %v, want > 0:\n%s", v, ok, grepMetrics(string(body), "ibtracer_http_"))
	}
	if logs := p.Logs(); strings.Contains(logs, "too many open files") {
		t.Errorf("the exporter ran out of file descriptors:\n%s", logs)
	}
}

// A client that does not read is cut off at --web.write-timeout: the
// server closes its connection, and what it can still read is shorter
// than the Content-Length it was promised.
func TestWriteTimeoutCutsStalledReaders(t *testing.T) {
	skipShort(t)
	// 3 s: long enough for a real scrape of 10,000 destinations to render
	// and be read on a loaded 2-core machine (the suite runs packages in
	// parallel), short enough for the test.
	p := startExporter(t, nil, manyDestinations(10000), "--ib.transport=sim", "--web.write-timeout=3s")
	if !poll(30*time.Second, 100*time.Millisecond, func() bool { code, _ := p.get("/-/healthy"); return code == 200 }) {
		t.Fatal("the exporter did not start")
	}
	c, status := stalledGet(t, p.addr, "/metrics")
	if status != "HTTP/1.1 200" {
		t.Fatalf("status %q", status)
	}
	// Wait past the write timeout without reading: the server's write
	// deadline passes while the socket's buffers are full.
	time.Sleep(4 * time.Second)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(io.MultiReader(strings.NewReader(status), c)), nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	t.Logf("stalled 4 s at a write timeout of 3 s: read %d of %d bytes, then %v", n, resp.ContentLength, err)
	if resp.ContentLength <= 0 || n >= resp.ContentLength || err == nil {
		t.Errorf("read %d of Content-Length %d (%v); want the connection cut short", n, resp.ContentLength, err)
	}
	var code int
	var body string
	for try := 0; try < 3 && code != 200; try++ {
		code, body = p.get("/metrics")
	}
	if code != 200 || len(body) < 1<<20 {
		t.Errorf("a real scrape afterwards: %d, %d bytes (%.200s)", code, len(body), body)
	}
}
