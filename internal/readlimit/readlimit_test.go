package readlimit

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

var small = Kind{Name: "test file", Limit: 1000}

func TestReadFileAtAndOverTheBound(t *testing.T) {
	dir := t.TempDir()
	at := filepath.Join(dir, "at")
	over := filepath.Join(dir, "over")
	if err := os.WriteFile(at, make([]byte, small.Limit), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(over, make([]byte, small.Limit+1), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := ReadFile(at, small)
	if err != nil || int64(len(b)) != small.Limit {
		t.Fatalf("a file of exactly the bound: %d bytes, %v", len(b), err)
	}
	_, err = ReadFile(over, small)
	want := over + ": larger than 1000 bytes, the most a test file may hold"
	var tl *TooLargeError
	if !errors.As(err, &tl) || err.Error() != want {
		t.Fatalf("one byte over the bound: got %v, want %s", err, want)
	}
}

// /dev/zero has no size and never ends: refused after Limit+1 bytes.
func TestReadFileDevZero(t *testing.T) {
	_, err := ReadFile("/dev/zero", NodeNameMap)
	want := "/dev/zero: larger than 32 MiB, the most a node-name-map may hold"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

// A FIFO whose writer never stops is refused once the bound is passed.
func TestReadFileEndlessFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	writerDone := make(chan error, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			writerDone <- err
			return
		}
		defer w.Close()
		line := []byte("0x10 \"a node\"\n")
		for {
			if _, err := w.Write(line); err != nil { // EPIPE once the reader is gone
				writerDone <- nil
				return
			}
		}
	}()
	_, err := ReadFile(fifo, small)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.File != fifo {
		t.Fatalf("got %v, want a TooLargeError for %s", err, fifo)
	}
	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
}

func TestReadFileMissing(t *testing.T) {
	_, err := ReadFile(filepath.Join(t.TempDir(), "nope"), small)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v, want not-exist", err)
	}
}

// ReadRegularFile reads a regular file (through a symbolic link too) with
// the bound, and refuses anything else at once, by name: a FIFO without a
// writer (open(2) would wait for one for ever), a directory, a device.
func TestReadRegularFile(t *testing.T) {
	dir := t.TempDir()
	at, over, link := filepath.Join(dir, "at"), filepath.Join(dir, "over"), filepath.Join(dir, "link")
	if err := os.WriteFile(at, make([]byte, small.Limit), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(over, make([]byte, small.Limit+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(at, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{at, link} {
		if b, err := ReadRegularFile(p, small); err != nil || int64(len(b)) != small.Limit {
			t.Fatalf("%s: %d bytes, %v", p, len(b), err)
		}
	}
	var tl *TooLargeError
	if _, err := ReadRegularFile(over, small); !errors.As(err, &tl) || tl.File != over {
		t.Fatalf("one byte over the bound: %v", err)
	}
	if _, err := ReadRegularFile(filepath.Join(dir, "nope"), small); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v, want not-exist", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for p, what := range map[string]string{fifo: "named pipe", dir: "directory", "/dev/zero": "device"} {
		done := make(chan error, 1)
		go func() { _, err := ReadRegularFile(p, small); done <- err }()
		select {
		case err := <-done:
			var nr *NotRegularError
			want := p + ": not a regular file but a " + what + "; a test file must be a regular file"
			if !errors.As(err, &nr) || nr.File != p || err.Error() != want {
				t.Fatalf("got %v, want %s", err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still reading after 5 s", p)
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{16 << 20: "16 MiB", 64 << 10: "64 KiB", 100: "100 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
