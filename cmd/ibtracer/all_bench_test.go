package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// BenchmarkAllVersusIbtracertLoop: on fattree-128 in ibsim with OpenSM
// running, one `ibtracer --all` against a shell loop of ibtracert over the
// same CA LIDs from the same host. Reports both wall times, the speed-up,
// and the MADs each spends (ibtracert: 5N+15 for N switch hops, as
// counted on ibsim: 30 SMPs through 3 switches).
func BenchmarkAllVersusIbtracertLoop(b *testing.B) {
	fab := ibsimtest.Start(b, filepath.Join(topoDir, "fattree-128.net"), ibsimtest.Options{KeepSM: true, SMHost: true})
	bin := binaryB(b)
	for i := 0; i < b.N; i++ {
		for _, validate := range []bool{false, true} { // validating last: see ibsimtest.Options.SMHost
			args := []string{"--ib.transport=ibsim", "--ibsim.node=H0-0", "--all", "--format=json"}
			if !validate {
				args = append(args, "--no-validate")
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = []string{"IBSIM_SOCKNAME=" + fab.SockName}
			start := time.Now()
			out, err := cmd.Output()
			ours := time.Since(start)
			if err != nil {
				b.Fatalf("ibtracer: %v", err)
			}
			var rs []trace.JSONResult
			if err := json.Unmarshal(out, &rs); err != nil {
				b.Fatal(err)
			}
			var lids []string
			mads, theirs := 0, 0
			src := rs[0].Hops[0].LID
			for _, r := range rs {
				mads += r.MADs
				if r.DLID != src {
					lids = append(lids, fmt.Sprint(r.DLID))
					if r.PathHops > 0 {
						theirs += 5*(r.PathHops-1) + 15
					}
				}
			}
			if !validate {
				script := fmt.Sprintf("for l in %s; do ibtracert %d $l > /dev/null || exit 1; done", strings.Join(lids, " "), src)
				loop := exec.Command("sh", "-c", script)
				loop.Dir = fab.Dir
				loop.Env = append(fab.Env("H0-0"), "PATH="+os.Getenv("PATH")+":/usr/sbin")
				start = time.Now()
				if o, err := loop.CombinedOutput(); err != nil {
					b.Fatalf("ibtracert loop: %v %s", err, o)
				}
				loopTime := time.Since(start)
				b.ReportMetric(loopTime.Seconds(), "ibtracert-loop-s")
				b.ReportMetric(ours.Seconds(), "ibtracer-novalidate-s")
				b.ReportMetric(loopTime.Seconds()/ours.Seconds(), "speedup-novalidate")
				b.ReportMetric(float64(theirs), "ibtracert-MADs")
				b.ReportMetric(float64(mads), "ibtracer-novalidate-MADs")
				facts := distinctFacts(rs)
				b.ReportMetric(float64(facts), "distinct-facts")
				b.ReportMetric(float64(mads)/float64(facts), "MADs/fact")
			} else {
				b.ReportMetric(ours.Seconds(), "ibtracer-s")
				b.ReportMetric(float64(mads), "ibtracer-MADs")
				b.ReportMetric(float64(len(rs)), "destinations")
			}
		}
	}
}

func binaryB(b *testing.B) string {
	dir := b.TempDir()
	p := filepath.Join(dir, "ibtracer")
	cmd := exec.Command("go", "build", "-o", p, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v %s", err, out)
	}
	return p
}
