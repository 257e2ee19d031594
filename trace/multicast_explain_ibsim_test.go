package trace

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

// TestMulticastCutTreeOnIbsim: OpenSM programs the MFTs of a group of
// H0-0 and H1-1, then dies (its tree stays in ibsim's switches, as after
// an SM failure), and the tree's link from the spine to H1-1's leaf is
// unlinked in ibsim. Stock ibtracert -m finds no route; ours names the
// spine and says that port of its MFT entry is down, from the PortInfo
// ibsim answers: the MFTs, the link state and the answers are all
// ibsim's and OpenSM's, not our simulator's.
func TestMulticastCutTreeOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join("..", "testdata", "topologies", "fattree-mini.net"), ibsimtest.Options{KeepSM: true, SMHost: true})
	mlid, err := fab.Join(ibsimtest.MGID(11), "H0-0", "H1-1")
	if err != nil {
		t.Fatal(err)
	}
	cas := discoverCAs(t, fab, "H0-0")
	src, dst := cas["H0-0"].lid, cas["H1-1"].lid
	e := ibmad.NewEngine(fab.Dial("H0-0", false), ibmad.Options{Timeout: time.Second, Retries: 1})
	defer e.Close()
	tr := New(e, Options{Timeout: 200 * time.Millisecond, Retries: new(1)})
	ctx := context.Background()
	var r *Result
	deadline := time.Now().Add(20 * time.Second) // OpenSM programs a new group's MFTs on its next pass
	for r = tr.TraceMulticast(ctx, mlid, 0, dst); r.Status != StatusOK && time.Now().Before(deadline); r = tr.TraceMulticast(ctx, mlid, 0, dst) {
		time.Sleep(200 * time.Millisecond)
	}
	if r.Status != StatusOK || len(r.Hops) != 5 {
		t.Fatalf("multicast trace before the cut: %s", r.Summary())
	}
	spine := r.Hops[2] // H0-0, L0, the spine, L1, H1-1
	fab.KillSM()       // no sweep rebuilds the tree
	if err := fab.Console(fmt.Sprintf("Unlink %q[%d]", spine.NodeDesc, spine.OutPort)); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second) // the console command is applied when ibsim reads it
	for r = tr.TraceMulticast(ctx, mlid, 0, dst); r.Status == StatusOK && time.Now().Before(deadline); r = tr.TraceMulticast(ctx, mlid, 0, dst) {
		time.Sleep(100 * time.Millisecond)
	}
	if out, err := fab.Tool("H0-0", "ibtracert", "-m", fmt.Sprintf("0x%04x", mlid), strconv.Itoa(int(src)), strconv.Itoa(int(dst))); err == nil {
		t.Fatalf("ibtracert -m over the cut tree succeeded:\n%s", out)
	}
	if r.Status != StatusUnreachable || r.Reason != ReasonNoRoute || r.Err == nil {
		t.Fatalf("after the cut: %s", r.Summary())
	}
	msg := r.Err.Error()
	t.Logf("after unlinking %s[%d]: %s", spine.NodeDesc, spine.OutPort, msg)
	if !strings.Contains(msg, strconv.Quote(spine.NodeDesc)) || !strings.Contains(msg, fmt.Sprintf("port %d's link was down", spine.OutPort)) {
		t.Fatalf("error %q; want %s's port %d named as down", msg, spine.NodeDesc, spine.OutPort)
	}
}
