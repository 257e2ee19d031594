package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim"
	"github.com/ibtracer/ibtracer_exporter/internal/syncbuf"
)

const topoDir = "../../testdata/topologies"

// TestServesUntilStopped: the command serves the topology under the
// socket name it is given; a client that names no node is attached at
// --sim.node and reads that node's port; stopping returns 0 and frees the
// name for the next server.
func TestServesUntilStopped(t *testing.T) {
	sock := fmt.Sprintf("fabriccmd%d", os.Getpid())
	for round := 0; round < 2; round++ {
		out := &syncbuf.Buffer{}
		stop := make(chan struct{})
		code := make(chan int, 1)
		go func() {
			code <- run([]string{"--sim.topology=" + filepath.Join(topoDir, "chain-5.net"), "--sim.node=hostB",
				"--sock.name=" + sock}, out, io.Discard, stop)
		}()
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(out.String(), "serving 8 nodes") {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: not serving within 20s: %q", round, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		tr, err := ibsim.Dial(ibsim.Options{SockName: sock, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if tr.NodeName() != "hostB" {
			t.Errorf("attached at %q, want --sim.node hostB", tr.NodeName())
		}
		pa, err := tr.Port()
		if err != nil || pa.LID == 0 || pa.State != ibmad.PortStateActive {
			t.Errorf("port %+v, %v: want an active port with a LID", pa, err)
		}
		tr.Close()
		close(stop)
		select {
		case c := <-code:
			if c != 0 {
				t.Fatalf("exit %d", c)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("run did not return within 20s of stop")
		}
	}
}

// TestBadArguments: bad flags and a bad topology or node are refused
// with an exit code and a message, without serving.
func TestBadArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--no-such-flag"}, 2, "unknown long flag"},
		{[]string{"--sim.topology=/nonexistent.net"}, 1, "nonexistent"},
		{[]string{"--sim.node=nobody"}, 1, "nobody"},
		{[]string{"--sim.lmc=9"}, 2, "--sim.lmc 9: want 0..7"}, // a bad flag value, as a bad flag
	} {
		var errb strings.Builder
		stop := make(chan struct{})
		close(stop)
		if c := run(append(tc.args, "--sock.name=fabricbad"), io.Discard, &errb, stop); c != tc.code || !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("%v: exit %d %q; want %d and %q", tc.args, c, errb.String(), tc.code, tc.msg)
		}
	}
}
