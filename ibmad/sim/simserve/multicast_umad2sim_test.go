package simserve_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestDiagsMulticast is the oracle of the simulated fabric's multicast
// forwarding tables (ibmad/sim/multicast.go): two groups programmed in the
// sim, and for every ordered pair of members of each, the stock
// `ibtracert -m MLID SRC DST` over the server prints exactly what our
// multicast trace prints (trace.Result.WriteMulticast: ibtracert -m's
// From, hop and To lines, after a summary line and a note, each hop with
// its verdict appended), both reading the sim's SwitchInfo and MFT blocks. ibtracert
// decodes the MFT blocks with libibmad, so the sim's block and position
// layout is checked against a reader that is not ours.
func TestDiagsMulticast(t *testing.T) {
	lib := requireDiags(t)
	o := openFabric(t, ibopen.Config{SimTopology: filepath.Join(topoDir, "fattree-mini.net"), SimAgents: "none"})
	f := o.Fabric
	groups := map[uint16][]string{
		0xc001: {"H0-0", "H0-2", "H1-1"},
		0xc002: {"H1-2", "H0-1", "H1-0"},
	}
	for mlid, members := range groups {
		if err := f.SetMulticastGroup(mlid, members...); err != nil {
			t.Fatal(err)
		}
	}
	s := serve(t, f, o.Node)
	tr := trace.New(engine(t, dial(t, s, "", false)), trace.Options{Validate: trace.ValidateAgent})
	pairs := 0
	for mlid, members := range groups {
		for _, a := range members {
			for _, b := range members {
				if a == b {
					continue
				}
				src, _ := f.LIDOf(a, 1)
				dst, _ := f.LIDOf(b, 1)
				r := tr.TraceMulticast(context.Background(), mlid, src, dst)
				if r.Status != trace.StatusOK {
					t.Fatalf("0x%04x %s -> %s: %s %v", mlid, a, b, r.Status, r.Err)
				}
				var ours bytes.Buffer
				r.WriteMulticast(&ours)
				out := diag(t, lib, s, "", nil, "ibtracert", "-m", fmt.Sprintf("0x%04x", mlid), strconv.Itoa(int(src)), strconv.Itoa(int(dst)))
				if pathLines(out) != pathLines(ours.String()) {
					t.Errorf("0x%04x %s -> %s: ibtracert -m\n%s\nours\n%s", mlid, a, b, out, ours.String())
				}
				pairs++
			}
		}
	}
	// A non-member: both fail.
	src, _ := f.LIDOf("H0-0", 1)
	dst, _ := f.LIDOf("H1-0", 1)
	if r := tr.TraceMulticast(context.Background(), 0xc001, src, dst); r.Status == trace.StatusOK {
		t.Errorf("our trace to a non-member: ok")
	}
	if out, err := diagErr(t, lib, s, "", nil, "ibtracert", "-m", "0xc001", strconv.Itoa(int(src)), strconv.Itoa(int(dst))); err == nil {
		t.Errorf("ibtracert -m to a non-member succeeded:\n%s", out)
	}
	t.Logf("%d multicast paths equal to ibtracert -m's over the server", pairs)
}

// pathLines is the From, hop and To lines of ibtracert -m's form, without
// the verdict our form appends to a hop.
func pathLines(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(l), " agent not_asked"))
		if strings.HasPrefix(l, "From ") || strings.HasPrefix(l, "[") || strings.HasPrefix(l, "To ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
