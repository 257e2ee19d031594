package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
)

// hostileTopology is a switch with five hosts whose node descriptions
// hold what a fabric may send: bytes of 0xff, control characters, a
// quote and backslashes, a description cut by the length limit in
// the middle of a two-byte character, and valid UTF-8. host1 runs the
// exporter; nmhost is renamed by a node-name-map line with bad bytes.
func hostileTopology() (net []byte, hosts []string) {
	hosts = []string{
		"host1",
		strings.Repeat("\xff", 63), // ibsim keeps 63 bytes and a NUL
		"ctl\x01\x07tab\there",
		`q'uo\\te`,
		strings.Repeat("x", 62) + "\xc3", // "é" cut after its first byte by the length limit
		"Müller-rack3",
		"nmhost",
	}
	var b strings.Builder
	b.WriteString("Switch\t8 \"sw1\"\n")
	for i, h := range hosts {
		fmt.Fprintf(&b, "[%d]\t\"%s\"[1]\n", i+1, h)
	}
	for i, h := range hosts {
		fmt.Fprintf(&b, "\nHca\t1\t\"%s\"\n[1]\t\"sw1\"[%d]\n", h, i+1)
	}
	return []byte(b.String()), hosts
}

// TestFabricStringsKeepEverySeries: node descriptions and node-name-map
// names that are not valid UTF-8, or hold control characters, go through
// the exporter on ibsim + OpenSM without losing a series: every
// discovered destination has its series under the name docs/architecture.md
// ("Strings from the fabric") gives it, a listed destination keeps its
// hop, the log has no gathering error, /traces JSON and HTML carry the
// same names as valid UTF-8, and each name shown finds its destination in
// /traces?destination=.
// startHostileFabric runs hostileTopology on ibsim with OpenSM on a host
// of its own, and returns the node GUID of nmhost and the LID of the 0xff
// host, found by a directed-route walk from host1.
func startHostileFabric(t *testing.T, dir string) (fab *ibsimtest.Fabric, nmGUID ibmad.GUID, ffLID uint16) {
	t.Helper()
	topo, _ := hostileTopology()
	topoFile := filepath.Join(dir, "hostile.net")
	if err := os.WriteFile(topoFile, topo, 0o644); err != nil {
		t.Fatal(err)
	}
	fab = ibsimtest.Start(t, topoFile, ibsimtest.Options{KeepSM: true, SMHost: true, SweepSeconds: 1})
	e := ibmad.NewEngine(fab.Dial("host1", false), ibmad.Options{Timeout: 2 * time.Second})
	defer e.Close()
	ports, err := madtest.WalkPortLIDs(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		switch {
		case strings.HasPrefix(p.Node.Desc, "nmhost"):
			nmGUID = p.Node.Info.NodeGUID
		case p.Node.Info.NodeType != ibmad.NodeTypeSwitch && strings.HasPrefix(p.Node.Desc, `\xff`):
			ffLID = p.LID
		}
	}
	if nmGUID == 0 || ffLID == 0 {
		t.Fatalf("walk: nmhost GUID %v, 0xff host LID %d", nmGUID, ffLID)
	}
	return fab, nmGUID, ffLID
}

func TestFabricStringsKeepEverySeries(t *testing.T) {
	skipShort(t)
	ibsimtest.Require(t)
	dir := t.TempDir()
	fab, nmGUID, ffLID := startHostileFabric(t, dir)
	nameMap := filepath.Join(dir, "node-name-map")
	if err := os.WriteFile(nameMap, []byte(fmt.Sprintf("%s \"nm\xfe\x01site\"\n", nmGUID)), 0o644); err != nil {
		t.Fatal(err)
	}

	// What each CA port is called (docs/architecture.md, "Strings from the
	// fabric"), written out literally rather than computed.
	ff := strings.Repeat(`\xff`, 63)
	want := []string{
		"listed",
		ff + "/1",
		"ctl  tab here/1",
		`q'uo\\te/1`,
		strings.Repeat("x", 62) + `\xc3/1`,
		"Müller-rack3/1",
		`nm\xfe site`,
	}
	sort.Strings(want)
	cfg := fmt.Sprintf(`interval: 1s
timeout: 300ms
retries: 1
node_name_map: %s
discover:
  - node_desc: "^[^i]"
    refresh: 10s
    interval: 1s
    hops: true
destinations:
  - {name: listed, lid: %d}
`, nameMap, ffLID)
	p := startIbsimExporter(t, fab, "host1", cfg)

	seriesNames := regexp.MustCompile(`(?m)^ibtracer_trace_success\{dest="((?:[^"\\]|\\.)*)"`)
	var body string
	var got []string
	ok := poll(45*time.Second, 200*time.Millisecond, func() bool {
		var code int
		code, body = p.get("/metrics")
		if code != 200 {
			return false
		}
		got = got[:0]
		for _, m := range seriesNames.FindAllStringSubmatch(body, -1) {
			got = append(got, unescapeLabel(m[1]))
		}
		sort.Strings(got)
		return strings.Join(got, "\n") == strings.Join(want, "\n") && allTraced(want...)(body)
	})
	if !ok {
		t.Fatalf("ibtracer_trace_success series by dest:\n got %q\nwant %q", got, want)
	}
	if !utf8.ValidString(body) {
		t.Error("/metrics is not valid UTF-8")
	}
	// The listed destination's last hop is the 0xff host, with its series.
	hopLine := ""
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, `ibtracer_hop_info{dest="listed",hop="2",`) {
			hopLine = l
		}
	}
	if want := fmt.Sprintf(`lid="%d",node_desc=%q`, ffLID, ff); !strings.Contains(hopLine, want) {
		t.Errorf("the listed destination's last hop: want %s, got %q\n%s", want, hopLine, grepMetrics(body, "ibtracer_hop_info"))
	}
	if logs := p.Logs(); strings.Contains(logs, "error gathering") || strings.Contains(logs, "not utf8") {
		t.Errorf("the log has gathering errors:\n%.2000s", logs)
	}

	checkTracesNames(t, p, want)
}

// checkTracesNames: /traces JSON names the destinations want, each name
// finds its destination in ?destination=, and the HTML page is valid
// UTF-8 with the names in it.
func checkTracesNames(t *testing.T, p *exporterProc, want []string) {
	t.Helper()
	views := p.traces()
	var shown []string
	for _, v := range views {
		shown = append(shown, v.Name)
	}
	sort.Strings(shown)
	if strings.Join(shown, "\n") != strings.Join(want, "\n") {
		t.Errorf("/traces names:\n got %q\nwant %q", shown, want)
	}
	for _, name := range want {
		code, one := p.get("/traces?destination=" + url.QueryEscape(name))
		if code != 200 || !strings.Contains(one, `"traces"`) {
			t.Errorf("/traces?destination=%q: %d %.200s", name, code, one)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+p.addr+"/traces", nil)
	req.Header.Set("Accept", "text/html")
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(b)
	if !utf8.ValidString(page) {
		t.Error("the /traces page declares UTF-8 but is not valid UTF-8")
	}
	if !strings.Contains(page, `Müller-rack3/1`) || !strings.Contains(page, `nm\xfe site`) {
		t.Error("the /traces page lacks a destination's name")
	}
}

// unescapeLabel undoes the exposition format's escaping of a label value.
func unescapeLabel(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\n`, "\n").Replace(s)
}
