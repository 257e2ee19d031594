package collector

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/localize"
)

var caLIDRe = regexp.MustCompile(`^ca (H1-\d) port 1 guid \S+ lid (\d+)$`)

// TestLinkLeftDownOnIbsim: on ibsim with OpenSM sweeping every second,
// a leaf–spine cable that a traced path crosses is unlinked on ibsim's
// console; once OpenSM routes around it, ibtracer_link_left_down names
// that link (PortInfo of its near end reads Down) and link_info names
// both ends; linked again (OpenSM brings the ports to Active), the
// series goes.
func TestLinkLeftDownOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	const at = "H0-0"
	fab := ibsimtest.Start(t, filepath.Join("..", "testdata", "topologies", "fattree-mini.net"),
		ibsimtest.Options{KeepSM: true, SweepSeconds: 1, Lifetime: 3 * time.Minute})
	out, err := fab.Tool(at, "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	_, cas := ibnetdiscoverPorts(out)
	yml := "interval: 1h\nvalidate: false\nshare_validation: 0s\ntimeout: 200ms\nretries: 1\ndestinations:\n"
	var dests []string
	for _, c := range cas {
		if m := caLIDRe.FindStringSubmatch(c); m != nil {
			yml += fmt.Sprintf("  - {name: %s, lid: %s}\n", m[1], m[2])
			dests = append(dests, m[1])
		}
	}
	if len(dests) != 3 {
		t.Fatalf("the hosts on L1: %v in %v", dests, cas)
	}
	eng := ibmad.NewEngine(fab.Dial(at, false), ibmad.Options{Timeout: 2 * time.Second})
	defer eng.Close()
	e := New(log.NewNopLogger(), "seed")
	e.clock = newFakeClock(time.Unix(1_800_000_000, 0)) // traced by hand
	defer e.Stop()
	e.SetDevice(eng, nil, nil)
	e.Apply(mustConfig(t, yml))
	e.traceEach(dests)
	if l := leftDown(t, e); len(l) != 0 {
		t.Fatalf("healthy fabric: link_left_down %v", l)
	}
	r := e.dests.get(dests[0]).last
	if len(r.Hops) != 5 {
		t.Fatalf("%s: %s, want H0-0, L0, a spine, L1, the host", dests[0], pathString(r))
	}
	sp, leaf := &r.Hops[2], &r.Hops[3]
	link := localize.NewLink(sp.NodeGUID, sp.OutPort, leaf.NodeGUID, leaf.InPort)
	// waitFor traces every destination until ok says the series are as
	// wanted (OpenSM sweeps every second), or fails after a minute.
	waitFor := func(what string, ok func(map[localize.Link]float64) bool) map[localize.Link]float64 {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; {
			e.traceEach(dests)
			if l := leftDown(t, e); ok(l) {
				return l
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: link_left_down %v, paths %s", what, leftDown(t, e), pathString(e.dests.get(dests[0]).last))
			}
			time.Sleep(200 * time.Millisecond) // polling OpenSM's sweep, bounded by the deadline
		}
	}
	if err := fab.Console(fmt.Sprintf(`Unlink "%s"[%d]`, sp.NodeDesc, sp.OutPort)); err != nil {
		t.Fatal(err)
	}
	got := waitFor("unlinked", func(l map[localize.Link]float64) bool { return l[link] >= 1 })
	t.Logf("unlinked %s[%d]: link_left_down %v; %s now %s", sp.NodeDesc, sp.OutPort, got, dests[0], pathString(e.dests.get(dests[0]).last))
	if len(got) != 1 {
		t.Fatalf("unlinked %v: link_left_down %v, want that link alone", link, got)
	}
	// link_info names the ends in the link's order (its labels').
	want := [2]string{sp.NodeDesc, leaf.NodeDesc}
	if link.NodeGUID != sp.NodeGUID {
		want = [2]string{leaf.NodeDesc, sp.NodeDesc}
	}
	if info := linkInfo(t, e); info[link] != want || len(info) != 1 || !strings.HasPrefix(sp.NodeDesc, "S") {
		t.Fatalf("link_info %v: want {%v: %q}", info, link, want)
	}
	if err := fab.Console(fmt.Sprintf(`Link "%s"[%d] "%s"[%d]`, sp.NodeDesc, sp.OutPort, leaf.NodeDesc, leaf.InPort)); err != nil {
		t.Fatal(err)
	}
	waitFor("linked again", func(l map[localize.Link]float64) bool { return len(l) == 0 })
	if info := linkInfo(t, e); len(info) != 0 {
		t.Fatalf("linked again: link_info %v", info)
	}
}
