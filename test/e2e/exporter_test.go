package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestExporterOnIbsimMatchesIbtracer: the exporter on ibsim (OpenSM,
// agents on several CAs) reports the hop counts, validated and unsupported
// hops that `ibtracer --format json` reports for the same destinations,
// both with their default validation (auto), and promtool finds nothing
// wrong with /metrics.
func TestExporterOnIbsimMatchesIbtracer(t *testing.T) {
	skipShort(t)
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-128.net"), ibsimtest.Options{})
	startAgents(t, fab, "H1-1", "H4-2", "H9-0", "H15-7")
	dests := map[string]string{"a": "H1-1", "b": "H4-2", "c": "H9-0", "d": "H15-7", "e": "H2-2", "f": "L7"}
	lids := lidsOf(t, fab, "H0-0")
	cfg := "interval: 1s\ntimeout: 300ms\nretries: 1\ndestinations:\n"
	var names []string
	for name, node := range dests {
		cfg += fmt.Sprintf("  - {name: %s, lid: %d}\n", name, lids[node])
		names = append(names, name)
	}
	p := startIbsimExporter(t, fab, "H0-0", cfg)
	body := p.waitFor(30*time.Second, "a trace of every destination", allTraced(names...))

	_, ibtracer := binaries(t)
	// Both with their defaults: validate: auto and --validate=auto ask our
	// agent where one answers and the SMA elsewhere.
	args := []string{"--ib.transport=ibsim", "--ibsim.node=H0-0", "--format=json", "-t", "300", "-r", "1"}
	for _, name := range names {
		args = append(args, "-l", strconv.Itoa(int(lids[dests[name]])))
	}
	cmd := exec.Command(ibtracer, args...)
	cmd.Env = []string{"IBSIM_SOCKNAME=" + fab.SockName}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ibtracer: %v", err)
	}
	var results []trace.JSONResult
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatal(err)
	}
	byLID := map[uint16]trace.JSONResult{}
	for _, r := range results {
		byLID[r.DLID] = r
	}
	for _, name := range names {
		r := byLID[lids[dests[name]]]
		validated, unsupported := 0, 0
		for _, h := range r.Hops[1:] {
			switch h.Verdict {
			case "validated":
				validated++
			case "unsupported", "lost":
				unsupported++
			}
		}
		for metric, want := range map[string]int{"path_hops": r.PathHops, "path_validated_hops": validated,
			"path_unsupported_hops": unsupported, "trace_success": 1} {
			got, ok := value(body, fmt.Sprintf(`ibtracer_%s{dest=%q}`, metric, name))
			if !ok || int(got) != want {
				t.Errorf("%s (%s): ibtracer_%s = %v, ibtracer --format json says %d", name, dests[name], metric, got, want)
			}
		}
	}
	if validated, _ := value(body, `ibtracer_path_validated_hops{dest="a"}`); validated != 1 {
		t.Errorf("destination a (agent on H1-1): %v validated hops", validated)
	}
	// promtool's lint of the exposition.
	check := exec.Command(promtest.RequireTool(t, "promtool", "prometheus"), "check", "metrics")
	check.Stdin = strings.NewReader(body)
	if o, err := check.CombinedOutput(); err != nil || len(strings.TrimSpace(string(o))) != 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, o)
	}
}
