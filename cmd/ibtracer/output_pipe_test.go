package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A reader that went away (ibtracer --all | true, | head -c 10) is an
// output that could not be written: exit 6 and one line on stderr, not a
// death by SIGPIPE (status 141) that says nothing. The pipe is a real
// one: the Go runtime kills a program on EPIPE only for descriptors 1
// and 2, which a writer in the test's own process never is.
func TestClosedPipeIsExit6(t *testing.T) {
	for _, args := range [][]string{
		{"--all", "--no-validate"},
		{"--all", "--no-validate", "--format=json"},
		{"-l", "2", "--no-validate", "-v"},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close() // the reader is gone before the first write
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, binary(t), append([]string{"--ib.transport=sim"}, args...)...)
		var errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = w, &errb
		err = cmd.Run()
		w.Close()
		cancel()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(errb.String(), "\n"), "\n")
		if code != exitDevice || len(lines) != 1 || !strings.Contains(lines[0], "broken pipe") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line naming the broken pipe", args, code, errb.String(), exitDevice)
		}
	}
}
