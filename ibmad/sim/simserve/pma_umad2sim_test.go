package simserve_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim/simserve"
	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
)

// TestDiagsPerfqueryXmitWait: the stock perfquery reads from the
// simulated PMA, over this server, the waits a congestion fault puts on
// a switch port (ibmad/sim/counters.go): PortXmitWait in PortCounters,
// and the one VL's PortVLXmitWait, every other VL 0. The sim's PMA encoding is so checked by a decoder that is not
// ours.
func TestDiagsPerfqueryXmitWait(t *testing.T) {
	lib := requireDiags(t)
	f, s := serveChain5(t)
	clk := fakeclock.New(time.Unix(1_800_000_000, 0))
	const port, vl = 2, 3
	if err := f.SetVLXmitWaitRate("s3", port, vl, 1000, clk.Now); err != nil {
		t.Fatal(err)
	}
	clk.Add(4500 * time.Millisecond) // 4500 ticks
	lid, _ := f.LIDOf("s3", 0)
	args := []string{strconv.Itoa(int(lid)), strconv.Itoa(port)}
	// perfquery -x is left out: under libumad2sim it reads PortCountersExtended's
	// data bytes from 160 on (VL15Dropped, PortXmitWait, QP1Dropped) wrong,
	// although the server sends them (our client over the same socket reads
	// PortXmitWait 4500), while the error counters before byte 160 are right.
	out := diag(t, lib, s, "", nil, "perfquery", args...)
	if got := field(out, "PortXmitWait"); got != "4500" {
		t.Errorf("perfquery: PortXmitWait %q, want 4500\n%s", got, out)
	}
	out = diag(t, lib, s, "", nil, "perfquery", append([]string{"--vlxmitcounters"}, args...)...)
	for i := 0; i < 16; i++ {
		want := "0"
		if i == vl {
			want = "4500"
		}
		if got := field(out, fmt.Sprintf("PortVLXmitWait%d", i)); got != want {
			t.Errorf("PortVLXmitWait%d: %q, want %s\n%s", i, got, want, out)
		}
	}
	if got := field(out, "PortSelect"); got != strconv.Itoa(port) {
		t.Errorf("PortSelect %q, want %d", got, port)
	}
}

// TestDiagsPerfqueryErrorDetails: the stock perfquery reads, over this
// server, the error details and FEC blocks put on a switch port
// (sim.AddPortErrors): PortRcvErrorDetails (-E), PortXmitDiscardDetails
// (-D) and PortExtendedSpeedsCounters (-T), which ibsim lacks. The sim's
// encoding of the three is so checked by a decoder that is not ours.
func TestDiagsPerfqueryErrorDetails(t *testing.T) {
	lib := requireDiags(t)
	f, s := serveChain5(t)
	const port = 2
	if err := f.AddPortErrors("s3", port, sim.PortErrors{RcvErrorDetails: [6]uint64{1, 2, 3, 4, 5, 6},
		XmitDiscardDetails: [4]uint64{7, 8, 9, 10}, FECCorrected: 4242, FECUncorrectable: 3}); err != nil {
		t.Fatal(err)
	}
	lid, _ := f.LIDOf("s3", 0)
	args := []string{strconv.Itoa(int(lid)), strconv.Itoa(port)}
	for _, c := range []struct {
		flag   string
		fields map[string]string
	}{
		{"-E", map[string]string{"PortLocalPhysicalErrors": "1", "PortMalformedPktErrors": "2", "PortBufferOverrunErrors": "3",
			"PortDLIDMappingErrors": "4", "PortVLMappingErrors": "5", "PortLoopingErrors": "6"}},
		{"-D", map[string]string{"PortInactiveDiscards": "7", "PortNeighborMTUDiscards": "8",
			"PortSwLifetimeLimitDiscards": "9", "PortSwHOQLifetimeLimitDiscards": "10"}},
		{"-T", map[string]string{"FECCorrectableBlockCtrLane0": "4242", "FECUncorrectableBlockCtrLane0": "3",
			"FECCorrectableBlockCtrLane1": "0", "ErrorDetectionCounterLane0": "0"}},
	} {
		out := diag(t, lib, s, "", nil, "perfquery", append([]string{c.flag}, args...)...)
		for k, want := range c.fields {
			if got := field(out, k); got != want {
				t.Errorf("perfquery %s: %s %q, want %s\n%s", c.flag, k, got, want, out)
			}
		}
	}
}

// serveChain5 is the simulated chain-5 fabric, served from hostA.
func serveChain5(t *testing.T) (*sim.Fabric, *simserve.Server) {
	t.Helper()
	topo, err := sim.LoadTopology(filepath.Join(topoDir, "chain-5.net"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(topo, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return f, serve(t, f, "hostA")
}
