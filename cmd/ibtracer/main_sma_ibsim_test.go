package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

// verboseHopRe is a hop line of -v: the node type and who said what.
var verboseHopRe = regexp.MustCompile(`^\[\d+\] -> (switch|ca) port \{0x[0-9a-f]+\}\[\d+\] lid \d+-\d+ "[^"]*" (agent|sma) (\S+)`)

// TestVerboseNoLostWhereTheSMAAnswersOnIbsim: `ibtracer -v` with its
// defaults (--validate=auto) on ibsim with no agent anywhere (OpenSM swept
// once and left, so no process runs at any node): the vendor MADs go
// unanswered, and every hop is then asked its SMA, which ibsim answers:
// every CA hop is "sma validated", every switch hop "sma
// ingress_unknown", none lost, to every LID of a ring with parallel links
// and 2-port HCAs.
func TestVerboseNoLostWhereTheSMAAnswersOnIbsim(t *testing.T) {
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "mesh-4.net"), ibsimtest.Options{})
	lids := allLIDs(t, fab, "h1")
	args := []string{"-v", "-t", "100", "-r", "1"}
	for lid, desc := range lids {
		if desc != "h1" {
			args = append(args, "-l", strconv.Itoa(int(lid)))
		}
	}
	out, errs, code := runCLI(t, fab, "h1", args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	hops := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "[") {
			continue
		}
		m := verboseHopRe.FindStringSubmatch(line)
		want := "validated"
		if m != nil && m[1] == "switch" {
			want = "ingress_unknown"
		}
		if m == nil || m[2] != "sma" || m[3] != want {
			t.Fatalf("hop line %q: want sma %s", line, want)
		}
		hops++
	}
	if hops < len(lids)-1 {
		t.Fatalf("%d hop lines for %d destinations:\n%s", hops, len(lids)-1, out)
	}
	t.Logf("%d hops to %d LIDs, every one answered by its SMA", hops, len(lids)-1)
}
