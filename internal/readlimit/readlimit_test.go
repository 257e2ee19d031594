package readlimit

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
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

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{16 << 20: "16 MiB", 64 << 10: "64 KiB", 100: "100 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
