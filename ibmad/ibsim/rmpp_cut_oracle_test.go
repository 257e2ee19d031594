package ibsim_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sa"
)

// TestOracleOpenSMSendsTheWholeTableIbsimCarriesOneMAD pins down where a
// multi-MAD SA answer is cut on ibsim (docs/protocol.md, "SA tables"):
// OpenSM builds the whole NodeRecord table and hands it to umad_send in
// one piece (its debug log says "osm_vendor_send: RMPP 1 length N", N =
// the 56-byte SA header and 112 bytes per record), leaving the
// segmentation to the kernel; libumad2sim copies the first 256 bytes of
// it into ibsim's one-MAD datagram. So our transport receives one MAD
// with one record (ErrTableTruncated), and so does stock saquery: the
// cut is in OpenSM's process, before ibsim and before our transport.
func TestOracleOpenSMSendsTheWholeTableIbsimCarriesOneMAD(t *testing.T) {
	ibsimtest.Require(t)
	const at = "H0-0"
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-4x2x4.net"), ibsimtest.Options{
		KeepSM: true, SMHost: true, SMArgs: []string{"-D", "0x09", "-d2"}}) // -d2: flush the log at every line
	tr := fab.Dial(at, false)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 2 * time.Second})
	defer e.Close()
	local, err := tr.Port()
	if err != nil || local.SMLID == 0 {
		t.Fatalf("port %+v: %v", local, err)
	}
	sm := sa.Address(local)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nodes := 0
	for lid := uint16(1); lid < 64; lid++ {
		if _, err := sa.NodeRecordOf(ctx, e, sm, lid); err == nil {
			nodes++
		} else if !sa.IsNoRecords(err) {
			t.Fatalf("NodeRecord of LID %d: %v", lid, err)
		}
	}
	if nodes != 16+6+1 {
		t.Fatalf("%d NodeRecords by LID, fattree-4x2x4 with the SM host has 23 nodes", nodes)
	}

	tab, err := sa.GetTable(ctx, e, sm, ibmad.AttrNodeRecord, 0, nil)
	if !errors.Is(err, ibmad.ErrTableTruncated) {
		t.Fatalf("NodeRecord GetTable of %d records: err %v, want ErrTableTruncated", nodes, err)
	}
	if tab.Len() != 1 || tab.Segments != 1 {
		t.Errorf("got %d records in %d MADs, want the first MAD's one record", tab.Len(), tab.Segments)
	}
	out, err := fab.Tool(at, "saquery", "NR")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "NodeRecord dump:"); n != 1 {
		t.Errorf("saquery NR printed %d records, want 1 (the same cut):\n%s", n, out)
	}

	// OpenSM's side: one umad_send of the whole table, for each of our
	// GetTable and saquery's.
	want := fmt.Sprintf("osm_vendor_send: RMPP 1 length %d\n", 56+112*nodes)
	var log []byte
	waited := time.Now()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		log, _ = os.ReadFile(filepath.Join(fab.Dir, "opensm.log"))
		if strings.Count(string(log), want) >= 2 {
			t.Logf("opensm.log: %q twice after %v", strings.TrimSpace(want), time.Since(waited).Round(time.Millisecond))
			return
		}
	}
	t.Errorf("opensm.log has %q %d times, want 2 (our GetTable and saquery's); its RMPP lines:\n%s",
		strings.TrimSpace(want), strings.Count(string(log), want), grepLines(string(log), "RMPP"))
}

func grepLines(s, sub string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
