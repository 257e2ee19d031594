package collector

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/collector/fleet"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

var linearTopRe = regexp.MustCompile(`LinearFdbTop:\.*(\d+)`)

// TestSampleByLIDOnIbsim: against OpenSM's SA under ibsim, the LID
// inventory a sampled selector draws from agrees with the stock tools:
// Top is the local leaf's LinearFDBTop as `smpquery switchinfo` reads
// it, and PortAt over LIDs 1..Top names the CA ports `ibnetdiscover`
// finds, port for port. The exporter's `all: true, sample: 3` then traces
// three of them, never its own, and asks the SA nothing: the ports
// answer for themselves, by LID-routed SMPs (issue 41).
func TestSampleByLIDOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	const at = "host1"
	fab := ibsimtest.Start(t, filepath.Join("..", "testdata", "topologies", "two-switch.net"), ibsimtest.Options{KeepSM: true})
	out, err := fab.Tool(at, "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	_, wantCA := ibnetdiscoverPorts(out)
	si, err := fab.Tool(at, "smpquery", "-D", "switchinfo", "0,1")
	if err != nil {
		t.Fatal(err)
	}
	m := linearTopRe.FindStringSubmatch(si)
	if m == nil {
		t.Fatalf("no LinearFDBTop in\n%s", si)
	}
	wantTop, _ := strconv.Atoi(m[1])

	tables := &tableCounter{}
	eng := ibmad.NewEngine(tables.wrap(fab.Dial(at, false)), ibmad.Options{Timeout: 2 * time.Second})
	defer eng.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inv := fleet.SAInventory(eng).(fleet.LIDInventory)
	top, err := inv.Top(ctx)
	if err != nil || int(top) != wantTop {
		t.Fatalf("Top %d, %v; smpquery switchinfo: LinearFDBTop %d", top, err, wantTop)
	}
	var ports []fleet.InventoryPort
	for lid := uint16(1); lid <= top; lid++ {
		p, ok, err := inv.PortAt(ctx, lid)
		if err != nil {
			t.Fatalf("LID %d: %v", lid, err)
		}
		if ok && p.NodeType == ibmad.NodeTypeCA {
			ports = append(ports, p)
		}
	}
	if got := selectedKeys(ports); strings.Join(got, "\n") != strings.Join(wantCA, "\n") {
		t.Fatalf("by LID:\n%s\nibnetdiscover:\n%s", strings.Join(got, "\n"), strings.Join(wantCA, "\n"))
	}

	fc := newFakeClock(time.Unix(1800000000, 0))
	e := New(log.NewNopLogger(), "seed")
	e.clock = fc
	defer e.Stop()
	e.SetDevice(eng, nil, nil)
	e.Apply(mustConfig(t, "interval: 1h\nvalidate: false\ndiscover:\n  - all: true\n    sample: 3\n    rotate: 1h\n    refresh: 30m\n"))
	deadline := time.Now().Add(time.Minute)
	var names []string
	for len(names) != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("destinations %v, want 3", names)
		}
		fc.Advance() // past the start's spread (fleet.StartSpread)
		time.Sleep(5 * time.Millisecond)
		names = names[:0]
		for _, s := range e.destinations() {
			names = append(names, fmt.Sprintf("%s=%d", s.cfg.Name, s.cfg.LID))
		}
	}
	for _, n := range names {
		if strings.HasPrefix(n, at+"/") || !slices.ContainsFunc(wantCA, func(k string) bool {
			return strings.HasSuffix(k, " lid "+n[strings.LastIndex(n, "=")+1:])
		}) {
			t.Errorf("destination %s: its own port, or not a CA port ibnetdiscover found", n)
		}
	}
	if n := tables.count(); n != 0 {
		t.Errorf("%d SA requests: a sampled selector asked the SA", n)
	}
}

// tableCounter counts the SA requests sent through a transport.
type tableCounter struct{ n atomic.Int64 }

func (c *tableCounter) wrap(t ibmad.Transport) ibmad.Transport {
	return &countingSends{Transport: t, c: c}
}
func (c *tableCounter) count() int { return int(c.n.Load()) }

type countingSends struct {
	ibmad.Transport
	c *tableCounter
}

func (s *countingSends) Send(p *ibmad.Packet) error {
	if p.MAD.MgmtClass() == ibmad.ClassSubnAdm {
		s.c.n.Add(1)
	}
	return s.Transport.Send(p)
}

// TestTableCutShortIsSaid: OpenSM's NodeRecord table reaches us through
// ibsim cut to its first MAD (docs/protocol.md, "RMPP"); the inventory
// then lists the ports a LID at a time. That is said, never silent: in
// ibtracer_discover_tables_cut_short_total and in one warning, not one
// per refresh (issue 41).
func TestTableCutShortIsSaid(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join("..", "testdata", "topologies", "two-switch.net"), ibsimtest.Options{KeepSM: true})
	eng := ibmad.NewEngine(fab.Dial("host1", false), ibmad.Options{Timeout: 2 * time.Second})
	defer eng.Close()
	fc := newFakeClock(time.Unix(1800000000, 0))
	var buf logBuffer
	e := New(log.NewLogfmtLogger(&buf), "seed")
	e.clock = fc
	defer e.Stop()
	e.SetDevice(eng, nil, nil)
	e.Apply(mustConfig(t, "interval: 1h\nvalidate: false\ndiscover:\n  - all: true\n    refresh: 10s\n"))
	deadline := time.Now().Add(time.Minute)
	for {
		if ok, _ := e.refreshCounts(); ok >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no three refreshes")
		}
		fc.Advance()
		time.Sleep(5 * time.Millisecond)
	}
	text := scrape(t, e)
	m := regexp.MustCompile(`(?m)^ibtracer_discover_tables_cut_short_total(?:\{\})? (\d+)$`).FindStringSubmatch(text)
	if m == nil || m[1] == "0" {
		t.Fatalf("ibtracer_discover_tables_cut_short_total: %v in\n%s", m, grep(text, "discover"))
	}
	warned := 0
	for _, l := range buf.take(t) {
		if strings.Contains(l["msg"], "table cut short") {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("%d warnings of a table cut short over %s refreshes, want 1", warned, m[1])
	}
}
