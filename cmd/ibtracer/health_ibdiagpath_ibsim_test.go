package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

// TestIbdiagpathUnderIbsim pins what ibdiagpath (Debian ibutils 1.5.7)
// does on ibsim: it crashes (SIGSEGV) right after "Traversing the path
// from local to destination", before any report, whatever the addressing
// (-l, -l -smp, -d), so its path report cannot be compared with ours
// there (docs/runbook.md, "Path health"). Should it ever run, this test
// fails: compare its report and exit status with ours then.
func TestIbdiagpathUnderIbsim(t *testing.T) {
	if _, err := exec.LookPath("ibdiagpath"); err != nil {
		t.Skip("ibdiagpath (Debian ibutils) is not installed")
	}
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "health.net"), ibsimtest.Options{})
	var dst uint16
	for l, n := range allLIDs(t, fab, "host1") {
		if n == "host2" {
			dst = l
		}
	}
	lid := strconv.Itoa(int(dst))
	for _, args := range [][]string{{"-l", lid, "-lw", "4x", "-ls", "2.5", "-pm"}, {"-l", lid, "-smp"}, {"-d", "1,3,1"}} {
		out, err := fab.Tool("host1", "ibdiagpath", append(args, "-o", fab.Dir)...)
		t.Logf("ibdiagpath %v: %v\n%s", args, err, out)
		if err == nil || !strings.Contains(err.Error(), "segmentation fault") {
			t.Fatalf("ibdiagpath %v no longer crashes under libumad2sim (%v): compare its path report and exit status with ours", args, err)
		}
	}
}
