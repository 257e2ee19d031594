package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// divergedAt decodes the JSON report of r and returns, per hop number,
// its diverged_at object, if any.
func divergedAt(t *testing.T, r *Result) map[int]map[string]any {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, []*Result{r}); err != nil {
		t.Fatal(err)
	}
	var out []struct {
		Hops []map[string]any `json:"hops"`
	}
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	m := map[int]map[string]any{}
	for _, h := range out[0].Hops {
		if d, ok := h["diverged_at"].(map[string]any); ok {
			m[int(h["hop"].(float64))] = d
		}
	}
	return m
}

// TestMismatchNamesTheDivergingSwitch: the simulator's diverging-switch
// fault (a switch's data plane sends another switch's LID out of a
// parallel cable while its LFT names the first) is seen at the switch
// the MAD arrives at; the report names the switch that forwarded wrongly,
// by name with its GUID, with the hop where it was seen, in the error,
// the summary, -v and the JSON. Twice: L0 diverging for the spine after
// it (on the traced path), and S0 diverging for L1's LID, a spine the
// traced path does not cross (the demo's case: L1 red, S0 at fault).
func TestMismatchNamesTheDivergingSwitch(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sw        string // the switch made to diverge
		seenAtHop int    // the hop whose validation MAD it misroutes
		mode      ValidateMode
		dst       string
	}{
		{"leaf before the spine, agents", "L0", 2, ValidateAgent, "H1-2"},
		{"leaf before the spine, SMAs", "L0", 2, ValidateSMA, "H1-2"},
		{"spine off the path, SMAs", "", 3, ValidateSMA, "H1-0"},
		{"spine off the path, agents", "", 3, ValidateAuto, "H1-0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := loadSim(t, "fattree-mini.net", sim.Options{})
			s.agentsEverywhere()
			tr := s.tracer("H0-0", Options{Validate: tc.mode, NoFastPath: true})
			dst := Destination{LID: s.lid(tc.dst)}
			r := tr.Trace(context.Background(), dst)
			if r.Status != StatusOK || r.PathHops() != 4 {
				t.Fatalf("healthy: %s %v", r.Status, r.Err)
			}
			seen := r.Hops[tc.seenAtHop]
			sw := tc.sw
			if sw == "" { // the last switch of the seen hop's own LID's route
				for _, n := range s.f.Nodes() {
					if n.GUID == seen.ExpectedFrom {
						sw = n.Name
					}
				}
				if sw == "" || sw == r.Hops[tc.seenAtHop-1].NodeDesc {
					t.Fatalf("hop %d's own LID's route comes from %q, want a switch off the path", tc.seenAtHop, sw)
				}
			}
			other := s.divergeParallel(sw, seen)
			lft := s.f.LFT(sw)[seen.LID]
			guid := s.f.Node(sw).GUID
			r = tr.Trace(context.Background(), dst)
			if r.Status != StatusMismatch {
				t.Fatalf("status %s, want mismatch", r.Status)
			}
			want := fmt.Sprintf("diverging switch %s (%s)", sw, guid)
			if r.Err == nil || !strings.Contains(r.Err.Error(), want+", seen at hop "+fmt.Sprint(tc.seenAtHop)) {
				t.Errorf("error %v, want it to name %q seen at hop %d", r.Err, want, tc.seenAtHop)
			}
			if !strings.Contains(r.Summary(), want+fmt.Sprintf(" sent it out of port %d, its LFT says port %d", other, lft)) {
				t.Errorf("summary %q, want %q with the ports", r.Summary(), want)
			}
			var v bytes.Buffer
			r.WriteVerbose(&v)
			if !strings.Contains(v.String(), want) {
				t.Errorf("-v does not name %q:\n%s", want, v.String())
			}
			d := divergedAt(t, r)
			got, ok := d[tc.seenAtHop]
			if !ok || len(d) != 1 || got["switch_name"] != sw || got["switch_guid"] != guid.String() ||
				got["out_port"] != float64(other) || got["lft_port"] != float64(lft) {
				t.Errorf("JSON diverged_at %v, want hop %d: %s %s out %d lft %d", d, tc.seenAtHop, sw, guid, other, lft)
			}
		})
	}
}
