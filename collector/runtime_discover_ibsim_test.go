package collector

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/collector/fleet"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

var (
	ndSwitchRe = regexp.MustCompile(`^Switch\s+\d+\s+"[^"]*"\s+#\s+"(.*)" base port 0 lid (\d+) lmc \d+`)
	ndCARe     = regexp.MustCompile(`^Ca\s+\d+\s+"[^"]*"\s+#\s+"(.*)"`)
	ndCAPortRe = regexp.MustCompile(`^\[(\d+)\]\(([0-9a-f]+)\)\s.*#\s+lid (\d+) lmc \d+ `)
)

// ibnetdiscoverPorts reads stock ibnetdiscover's output into what a
// selector can pick: "switch <desc> lid N" per switch and "ca <desc>
// port P guid G lid N" per CA port.
func ibnetdiscoverPorts(out string) (switches, cas []string) {
	ca := ""
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if m := ndSwitchRe.FindStringSubmatch(line); m != nil {
			switches = append(switches, fmt.Sprintf("switch %s lid %s", m[1], m[2]))
			ca = ""
			continue
		}
		if m := ndCARe.FindStringSubmatch(line); m != nil {
			ca = m[1]
			continue
		}
		if m := ndCAPortRe.FindStringSubmatch(line); m != nil && ca != "" {
			g, _ := strconv.ParseUint(m[2], 16, 64)
			cas = append(cas, fmt.Sprintf("ca %s port %s guid %#x lid %s", ca, m[1], g, m[3]))
		}
	}
	sort.Strings(switches)
	sort.Strings(cas)
	return switches, cas
}

func selectedKeys(ps []fleet.InventoryPort) []string {
	var out []string
	for _, p := range ps {
		if p.NodeType == ibmad.NodeTypeSwitch {
			out = append(out, fmt.Sprintf("switch %s lid %d", p.NodeDesc, p.LID))
		} else {
			out = append(out, fmt.Sprintf("ca %s port %d guid %#x lid %d", p.NodeDesc, p.Port, p.PortGUID, p.LID))
		}
	}
	sort.Strings(out)
	return out
}

func filterKeys(keys []string, re string) []string {
	r := regexp.MustCompile(re)
	var out []string
	for _, k := range keys {
		if r.MatchString(k) {
			out = append(out, k)
		}
	}
	return out
}

// TestDiscoveryOnIbsim: against OpenSM's SA under ibsim, the all,
// node_type and node_desc selectors give the ports stock ibnetdiscover
// finds; a host whose only link is unplugged leaves the exporter's
// destinations at the refresh after OpenSM's sweep; with the SA down a
// refresh fails and the destinations stay.
func TestDiscoveryOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	const at = "host1"
	fab := ibsimtest.Start(t, filepath.Join("..", "testdata", "topologies", "two-switch.net"),
		ibsimtest.Options{KeepSM: true, SweepSeconds: 1})
	out, err := fab.Tool(at, "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	wantSw, wantCA := ibnetdiscoverPorts(out)
	if len(wantSw) != 2 || len(wantCA) != 6 {
		t.Fatalf("ibnetdiscover: parsed %d switches, %d CA ports from\n%s", len(wantSw), len(wantCA), out)
	}
	eng := ibmad.NewEngine(fab.Dial(at, false), ibmad.Options{Timeout: 2 * time.Second})
	defer eng.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ports, err := fleet.SAInventory(eng).Ports(ctx)
	if !errors.Is(err, fleet.ErrTableCutShort) { // OpenSM's table reaches us cut short under ibsim: listed by LID
		t.Fatalf("%v, want %v: the list whole, read a LID at a time", err, fleet.ErrTableCutShort)
	}
	for _, tc := range []struct {
		sel  config.Selector
		want []string
	}{
		{config.Selector{All: true}, wantCA},
		{config.Selector{NodeType: "ca"}, wantCA},
		{config.Selector{NodeType: "switch"}, wantSw},
		{config.Selector{NodeDesc: "^host[25]$", Regexp: regexp.MustCompile("^host[25]$")}, filterKeys(wantCA, `^ca host[25] `)},
	} {
		got := selectedKeys(fleet.MatchPorts(&tc.sel, ports, 0))
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%+v:\n%s\nibnetdiscover:\n%s", tc.sel, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}

	// The exporter's discovery loop, on a fake clock (its SA queries are
	// real): host4's only link goes, and then the SA.
	fc := newFakeClock(time.Unix(1800000000, 0))
	e := New(log.NewNopLogger(), "seed")
	e.clock = fc
	defer e.Stop()
	e.SetDevice(eng, nil, nil)
	e.Apply(mustConfig(t, "interval: 1h\nvalidate: false\ndiscover:\n  - all: true\n    refresh: 10s\n"))
	current := func() string {
		var out []string
		for _, s := range e.destinations() {
			out = append(out, fmt.Sprintf("%s=%d", s.cfg.Name, s.cfg.LID))
		}
		return strings.Join(out, ",")
	}
	refreshes := e.refreshCounts
	// waitRefresh advances the fake clock until one more refresh is done.
	waitRefresh := func(what string) {
		t.Helper()
		ok0, f0 := refreshes()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			if ok, f := refreshes(); ok+f > ok0+f0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no refresh", what)
			}
			fc.Advance()
			time.Sleep(5 * time.Millisecond) // polling the loop on the real SA, bounded by the deadline
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for strings.Count(current(), "=") != 5 { // every CA port but host1's own
		if time.Now().After(deadline) {
			t.Fatalf("first refresh: %s", current())
		}
		time.Sleep(5 * time.Millisecond)
	}
	before := current()
	if !strings.Contains(before, "host4/1=") || strings.Contains(before, "host1/1=") {
		t.Fatalf("destinations %s: want every CA port but this node's", before)
	}
	if err := fab.Console(`Unlink "host4"[1]`); err != nil {
		t.Fatal(err)
	}
	// OpenSM sweeps every second; refresh until host4 is gone.
	for deadline := time.Now().Add(90 * time.Second); strings.Contains(current(), "host4/1="); {
		if time.Now().After(deadline) {
			t.Fatalf("host4 unplugged: still in %s", current())
		}
		waitRefresh("after the unlink")
	}
	if got, want := strings.Count(current(), "="), 4; got != want {
		t.Fatalf("after host4 left: %s", current())
	}
	if perDest, _, _ := seriesCount(t, e); perDest["host4/1"] != 0 {
		t.Fatalf("host4's series remain: %v", perDest)
	}
	// The SA goes down: the refresh fails, the set stays.
	kept := current()
	fab.KillSM()
	_, f0 := refreshes()
	waitRefresh("with the SA down")
	if _, f := refreshes(); f != f0+1 {
		t.Fatalf("refreshes failed: %d, want %d", f, f0+1)
	}
	if got := current(); got != kept {
		t.Fatalf("with the SA down: %s, want %s kept", got, kept)
	}
}
