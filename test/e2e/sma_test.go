package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

var hopVerdictRe = regexp.MustCompile(`(?m)^ibtracer_hop_verdict\{([^}]*)\} 1$`)

// TestExporterValidatesBySMAOnIbsim: the exporter binary on ibsim +
// OpenSM with no agent anywhere (--no-agent at the source, none started
// elsewhere), as a real fabric whose switches cannot run ours, with the
// default validate: auto. From h1 of the mesh (parallel links, 2-port
// HCAs) to every other node: every CA hop is validated by its SMA, every
// switch hop ingress_unknown by its SMA (ibsim answers LocalPortNum 0 at
// switches, docs/protocol.md, "Validation by the SMA"), none lost,
// unsupported or mismatched; the metrics say the same, and no latency is
// observed (no destination's agent answered). OpenSM runs on a host of
// its own that is no destination: auto sends each hop one vendor MAD
// first, and OpenSM under ibsim exits on one (docs/architecture.md,
// "Testing against independent sources").
func TestExporterValidatesBySMAOnIbsim(t *testing.T) {
	skipShort(t)
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "mesh-4.net"), ibsimtest.Options{KeepSM: true, SMHost: true})
	lids := lidsOf(t, fab, "h1")
	cfg := "interval: 2s\ntimeout: 300ms\nretries: 1\ndestinations:\n"
	var names []string
	for node, lid := range lids {
		if node == "h1" || node == ibsimtest.SMHostName {
			continue
		}
		cfg += fmt.Sprintf("  - {name: %s, lid: %d}\n", node, lid)
		names = append(names, node)
	}
	sort.Strings(names)
	if len(names) != 4+3+4 {
		t.Fatalf("destinations %v: want 4 switches, 3 hosts and 4 HCAs", names)
	}
	p := startIbsimExporter(t, fab, "h1", cfg, "--no-agent")
	body := p.waitFor(60*time.Second, "a trace of every destination", allTraced(names...))

	cas, switches := 0, 0
	for _, v := range p.traces() {
		if v.Last == nil || v.Last.Status != "ok" {
			t.Fatalf("%s: last trace %+v", v.Name, v.Last)
		}
		for _, h := range v.Last.Hops[1:] {
			want := "validated"
			if h.NodeType == "switch" {
				want, switches = "ingress_unknown", switches+1
			} else {
				cas++
			}
			if h.Verdict != want || h.ValidatedBy != "sma" {
				t.Errorf("%s hop %d %s (%s): %s by %q, want %s by sma", v.Name, h.Hop, h.NodeDesc, h.NodeType, h.Verdict, h.ValidatedBy, want)
			}
		}
	}
	if cas == 0 || switches == 0 {
		t.Fatalf("%d CA hops, %d switch hops", cas, switches)
	}
	// The series: one per hop, every one validated_by="sma"; nothing
	// unsupported; the destinations' latency untouched.
	verdicts := hopVerdictRe.FindAllStringSubmatch(body, -1)
	if len(verdicts) != cas+switches {
		t.Errorf("%d ibtracer_hop_verdict series, want %d (one per hop)", len(verdicts), cas+switches)
	}
	for _, m := range verdicts {
		if !strings.Contains(m[1], `validated_by="sma"`) || strings.Contains(m[1], `verdict="lost"`) {
			t.Errorf("ibtracer_hop_verdict{%s}", m[1])
		}
	}
	for _, name := range names {
		if n, ok := value(body, fmt.Sprintf(`ibtracer_path_unsupported_hops{dest=%q}`, name)); !ok || n != 0 {
			t.Errorf("%s: path_unsupported_hops %v (present %v), want 0", name, n, ok)
		}
	}
	if n, ok := value(body, "ibtracer_latency_seconds_count"); !ok || n != 0 {
		t.Errorf("latency observations %v (present %v), want 0: no destination's agent answered", n, ok)
	}
	if _, err := fab.Tool("h2", "saquery", "-s"); err != nil {
		t.Fatalf("OpenSM after the traces: %v", err)
	}
}
