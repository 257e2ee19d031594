package collector

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/localize"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// The logs name nodes as a person does: the node-name-map name, else the
// node description, then the GUID. "path changed" writes both paths hop
// by hop that way; a link's counter lines name the link by its two ends.
func TestLogsNameNodes(t *testing.T) {
	e := pagesExporter(t)
	db01 := e.dests.get("db01")
	prev, _ := db01.previous()
	if prev == nil {
		t.Fatal("no path change in pagesExporter")
	}
	r := *db01.last
	r.Hops = append([]trace.Hop(nil), r.Hops...)
	r.Hops[1].NodeName = "spine-b"
	r.Hops[1].ExpectedInPort, r.Hops[1].ActualInPort = 0, 0
	r.Status, r.Start = trace.StatusOK, r.Start.Add(time.Minute)
	// Back to the first path, the switch named by the map: a change.
	back := *prev
	back.Start = r.Start.Add(time.Minute)
	db01.observe(&r)
	var pc []opsEvent
	for _, ev := range db01.observe(&back) {
		if ev.kv[1] == "path changed" {
			pc = append(pc, ev)
		}
	}
	if len(pc) != 1 {
		t.Fatalf("%d path changes logged, want 1", len(pc))
	}
	kv := fmt.Sprint(pc[0].kv)
	for _, w := range []string{
		`old_path me {0x0000000000000010}[0>1] -> spine-b {0x0000000000000021}[1>7] -> "db01 HCA-1" {0x0000000000000030}[1>0]`,
		`new_path me {0x0000000000000010}[0>1] -> leaf-a {0x0000000000000020}[1>4] -> "db01 HCA-1" {0x0000000000000030}[1>0]`,
	} {
		if !strings.Contains(kv, w) {
			t.Errorf("%q not in %v", w, kv)
		}
	}

	c := ctrLog{links: map[localize.Link]*ctrSeen{}}
	l := ctrLink("ok", "unavailable")
	l.A.NodeName, l.B.NodeDesc = "leaf-1", "spine 2"
	ev, ok := c.noteLocked(l, time.Unix(1_800_000_000, 0))
	if !ok {
		t.Fatal("no counter line")
	}
	if kv := fmt.Sprint(ev.kv); !strings.Contains(kv, `link leaf-1 {0x0000000000000010}[1] -> "spine 2" {0x0000000000000020}[3]`) {
		t.Errorf("counter line %v: want the link named by both ends", kv)
	}
}
