package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// lockedBuffer is a log destination the test reads while the code under
// test may still write to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// mkfifo makes a FIFO at path and, when the test ends, opens it for
// writing once without blocking, so that a reader the code under test
// left blocked in open(2) is let go.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
}

// within runs f and says whether it returned within d.
func within(d time.Duration, f func()) bool {
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// A web configuration that is not a regular file (a FIFO, a directory, a
// device) is refused at once, by name, when the exporter starts: a FIFO
// without a writer blocked the start for ever in open(2).
func TestWebConfigNotRegularRefusedAtStart(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "web.yml")
	mkfifo(t, fifo)
	for _, c := range []struct{ path, kind string }{{fifo, "named pipe"}, {dir, "directory"}, {"/dev/null", "device"}} {
		var w *webConfigCopy
		var err error
		if !within(5*time.Second, func() { w, err = newWebConfigCopy(c.path, log.NewNopLogger()) }) {
			t.Fatalf("%s: still opening after 5 s", c.path)
		}
		if err == nil {
			w.Close()
			t.Fatalf("%s: taken as a web configuration", c.path)
		}
		if want := c.path + ": not a regular file but a " + c.kind; !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v, want %q", c.path, err, want)
		}
	}
}

// The web configuration, or a file it names, replaced by a FIFO under a
// running exporter: the change is refused at once, by name, counted and
// logged, and the last good copy stays in force. The poll blocked for
// ever in open(2), holding the copy's lock.
func TestWebConfigNotRegularRefusedOnReload(t *testing.T) {
	for _, name := range []string{"web.yml", "key.pem"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeWebConfig(t, dir, 0o600)
			var logs lockedBuffer
			w, err := newWebConfigCopy(filepath.Join(dir, "web.yml"), log.NewLogfmtLogger(&logs))
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			good, _ := os.ReadFile(w.Path())
			p := filepath.Join(dir, name)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			mkfifo(t, p)
			if !within(5*time.Second, w.check) {
				t.Fatalf("the check is still opening %s after 5 s", name)
			}
			if n := testutil.ToFloat64(w.refused); n != 1 {
				t.Fatalf("refused %v times, want 1", n)
			}
			if now, _ := os.ReadFile(w.Path()); !bytes.Equal(now, good) {
				t.Fatalf("the copy changed after a refused change:\n%s", now)
			}
			want := p + ": not a regular file but a named pipe"
			if l := logs.String(); !strings.Contains(l, "web configuration change refused") || !strings.Contains(l, want) {
				t.Fatalf("the log does not say %q:\n%s", want, l)
			}
		})
	}
}
