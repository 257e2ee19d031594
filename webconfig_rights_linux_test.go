package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// exporterUID is who the exporter runs as in TestWebConfigRetriedAfterChmodChown
// when the test runs as root (nobody).
const exporterUID = 65534

// asExporter runs f with the rights the exporter would have: as root, on
// a thread of its own whose filesystem user and group are exporterUID
// (setfsuid(2) from 0 drops CAP_DAC_OVERRIDE on that thread only, so the
// kernel checks permissions as for that user; the thread ends with f);
// otherwise as the test's user.
func asExporter(f func()) {
	if os.Geteuid() != 0 {
		f()
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread is not reused
		_ = syscall.Setfsgid(exporterUID)
		_ = syscall.Setfsuid(exporterUID)
		f()
	}()
	<-done
}

// A web configuration change refused because the exporter could not read
// a file is taken once chmod or chown makes the file readable; before,
// only the inode, size and modification time were compared, and the
// refused change was never read again.
func TestWebConfigRetriedAfterChmodChown(t *testing.T) {
	root := os.Geteuid() == 0
	dir, err := os.MkdirTemp("", "webconfig-rights-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeWebConfig(t, dir, 0o644)
	ca := filepath.Join(dir, "ca.pem")
	unreadable := os.FileMode(0o600) // root's, to exporterUID
	if !root {
		unreadable = 0 // the test's own, to itself
	}
	var probeErr error
	probe := filepath.Join(dir, "probe")
	if err := os.WriteFile(probe, nil, unreadable); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(probe, unreadable)
	asExporter(func() { _, probeErr = os.ReadFile(probe) })
	if !errors.Is(probeErr, fs.ErrPermission) {
		t.Skipf("a file of mode %v is readable to the exporter here (%v)", unreadable, probeErr)
	}

	var logs lockedBuffer
	var w *webConfigCopy
	asExporter(func() { w, err = newWebConfigCopy(filepath.Join(dir, "web.yml"), log.NewLogfmtLogger(&logs)) })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	copyText := func() string {
		b, err := os.ReadFile(w.Path())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	steps := []struct {
		name string
		fix  func() error
	}{
		{"chmod", func() error { return os.Chmod(ca, 0o644) }},
		{"chown", func() error { return os.Chown(ca, exporterUID, exporterUID) }},
	}
	for i, s := range steps {
		if s.name == "chown" && !root {
			t.Log("chown: skipped, the test does not run as root")
			continue
		}
		content := "the CA before " + s.name + "\n"
		next := filepath.Join(dir, "ca.next")
		if err := os.WriteFile(next, []byte(content), unreadable); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(next, unreadable); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(next, ca); err != nil { // in one step, as the runbook says
			t.Fatal(err)
		}
		good := copyText()
		asExporter(w.check)
		asExporter(w.check)
		if c := copyText(); c != good {
			t.Fatalf("%s: the copy changed though the CA file is unreadable:\n%s", s.name, c)
		}
		if n := testutil.ToFloat64(w.refused); n != float64(i+1) {
			t.Fatalf("%s: refused %v times, want %d", s.name, n, i+1)
		}
		if err := s.fix(); err != nil {
			t.Fatal(err)
		}
		asExporter(w.check)
		if c := copyText(); !strings.Contains(c, content) {
			t.Fatalf("%s: the readable CA file not taken:\n%s\nlog:\n%s", s.name, c, logs.String())
		}
		if n := strings.Count(logs.String(), "web configuration changed and accepted again"); n != i+1 {
			t.Fatalf("%s: %d lines saying the change was accepted, want %d:\n%s", s.name, n, i+1, logs.String())
		}
	}
	// A chmod that makes the file in use unreadable is a change too: it is
	// refused, said, and the running configuration stays.
	good := copyText()
	before := testutil.ToFloat64(w.refused)
	if err := os.Chmod(ca, 0); err != nil {
		t.Fatal(err)
	}
	asExporter(w.check)
	if c := copyText(); c != good {
		t.Fatalf("the copy changed though the CA file became unreadable:\n%s", c)
	}
	if n := testutil.ToFloat64(w.refused); n != before+1 {
		t.Fatalf("chmod 0 on the CA file in use: refused %v times, want %v", n, before+1)
	}
	if !strings.Contains(logs.String(), ca+": permission denied") {
		t.Fatalf("the log does not say the CA file is unreadable:\n%s", logs.String())
	}
}
