package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/collector/pages"
)

// TestPagesNameThePulledCableOnIbsim: on ibsim with OpenSM sweeping, the
// node-name-map naming sw1 "edge-1", near's only cable (sw1 port 2 -
// host3) is pulled. The landing page then counts near failing and lists
// that cable among the suspected links by both ends' names (the map's
// for sw1, ibsim's node description for host3) with their GUIDs, as
// iblinkinfo and smpquery give them; /traces?link= finds near by either
// end's name, ?destination= by host3's description; near's page marks
// where its trace broke and draws its last good path; the "path changed"
// and "destination failing" lines name nodes by name.
func TestPagesNameThePulledCableOnIbsim(t *testing.T) {
	skipShort(t)
	fab, lids := startTwoSwitch(t)
	cable, line := linkOf(t, fab, "sw1", "host3")
	t.Logf("near's cable, by iblinkinfo -l and smpquery nodeinfo: %v (%s)", cable, strings.TrimSpace(line))
	sw1, host3 := cable.NodeGUID, cable.RemoteNodeGUID // sw1's end is its port 2, host3's its port 1
	if cable.Port != 2 {
		sw1, host3 = host3, sw1
	}
	names := filepath.Join(t.TempDir(), "ib-node-name-map")
	if err := os.WriteFile(names, []byte(fmt.Sprintf("%s \"edge-1\"\n", sw1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("interval: 1s\ntimeout: 200ms\nretries: 1\nevidence: {enabled: true}\nnode_name_map: %s\ndestinations:\n"+
		"  - {name: far, lid: %d}\n  - {name: near, lid: %d}\n", names, lids["host2"], lids["host3"])
	exp := startIbsimExporter(t, fab, "host1", cfg)
	exp.waitFor(30*time.Second, "first traces", allTraced("far", "near"))
	if _, landing := exp.get("/"); !strings.Contains(landing, "(2 of 2 ok)") || !strings.Contains(landing, "None: no bad path.") {
		t.Fatalf("healthy fabric: the landing page says\n%s", landing)
	}
	if err := fab.Console(`Unlink "sw1"[2]`); err != nil {
		t.Fatal(err)
	}
	exp.waitFor(45*time.Second, "near failing with its cable suspected", func(b string) bool {
		v, _ := value(b, `ibtracer_trace_success{dest="near"}`)
		s, _ := value(b, linkSeriesName("ibtracer_link_suspicion", cable))
		return v == 0 && s > 0
	})
	ends := map[string]string{
		sw1.String():   fmt.Sprintf("edge-1 {%s}[2]", sw1),
		host3.String(): fmt.Sprintf("host3 {%s}[1]", host3),
	}
	row := ends[cable.NodeGUID.String()] + " — " + ends[cable.RemoteNodeGUID.String()]
	_, landing := exp.get("/")
	for _, want := range []string{"1 of 2 ok", "1 failing", row} {
		if !strings.Contains(landing, want) {
			t.Errorf("the landing page lacks %q:\n%s", want, landing)
		}
	}
	list := func(q string) string {
		code, body := exp.get("/traces?" + q)
		var v []pages.TraceView
		if err := json.Unmarshal([]byte(body), &v); err != nil || code != 200 {
			return fmt.Sprintf("%d %s", code, body)
		}
		var n []string
		for _, d := range v {
			n = append(n, d.Name)
		}
		return strings.Join(n, " ")
	}
	for q, want := range map[string]string{
		"link=edge-1:2":                    "near",
		"link=host3:1":                     "near",
		"link=" + sw1.String() + ":2":      "near",
		"destination=host3":                "near",
		"destination=" + host3.String():    "near",
		"link=edge-1:2&destination=far":    "",
		"link=" + url.QueryEscape("sw2:1"): "far",
	} {
		if got := list(q); got != want {
			t.Errorf("/traces?%s: %q, want %q", q, got, want)
		}
	}
	_, page := exp.get("/traces?destination=near&format=html")
	for _, want := range []string{`class="hop break"`, "broke here", "Last good path", "host3"} {
		if !strings.Contains(page, want) {
			t.Errorf("near's page lacks %q:\n%s", want, page)
		}
	}
	_, page = exp.get("/traces?link=edge-1:2&format=html")
	if !strings.Contains(page, fmt.Sprintf("the link at <b>edge-1 {%s}:2</b>", sw1)) || !strings.Contains(page, " cross\"") {
		t.Errorf("the filtered page does not show its filter or the crossing:\n%s", page)
	}
	logs := exp.Logs()
	if !strings.Contains(logs, `msg="destination failing" destination=near`) {
		t.Errorf("no failing line for near:\n%s", logs)
	}
	t.Logf("landing page's suspected links row: %s", row)
}
