package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// failingWriter takes nothing: a full disk or a closed pipe.
type failingWriter struct{ writes int }

func (f *failingWriter) Write([]byte) (int, error) {
	f.writes++
	return 0, errors.New("no space left on device")
}

// A run whose output could not be written says so and does not exit 0:
// the traces were made, but nobody can read them.
func TestOutputThatCannotBeWrittenIsAnError(t *testing.T) {
	for _, args := range [][]string{
		{"--all", "--no-validate"},
		{"--all", "--no-validate", "-v"},
		{"--all", "--no-validate", "--format=json"},
		{"-l", "2", "-l", "3"},
		{"--lmc-all", "-l", "2"},
		{"--all", "--lmc-all", "--no-validate", "--format=json"},
		{"--via=0x0000000000200002:1", "--no-validate"},
		{"--via=0x0000000000200002:1", "--no-validate", "-v"},
		{"--via=0x0000000000200002:1", "--no-validate", "--format=json"},
		// More than the output's buffer: the write fails before the flush.
		{"--sim.topology=" + filepath.Join(topoDir, "fattree-128.net"), "--all", "--no-validate", "--format=json"},
	} {
		var out failingWriter
		var errb bytes.Buffer
		code := run(append([]string{"--ib.transport=sim"}, args...), &out, &errb)
		if code != exitDevice || strings.Count(errb.String(), "no space left on device") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d naming the write error once", args, code, errb.String(), exitDevice)
		}
		if out.writes == 0 {
			t.Errorf("%v: nothing was written", args)
		}
	}
}

// The text is written in few writes, not one per line.
func TestTextOutputIsBuffered(t *testing.T) {
	var out countingWriter
	var errb bytes.Buffer
	if code := run([]string{"--ib.transport=sim", "--all", "--no-validate"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Count(out.b.String(), "\n")
	if lines < 10 || out.writes > 2 {
		t.Errorf("%d lines in %d writes; want them in at most 2", lines, out.writes)
	}
}

type countingWriter struct {
	b      bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) { c.writes++; return c.b.Write(p) }
