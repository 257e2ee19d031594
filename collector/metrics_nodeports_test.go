package collector

import (
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestNodePortSeries: ibtracer_local_port_info names the exporter's own
// port (node GUID, port GUID, description); ibtracer_destination_last_port_info
// exists only while the last trace of a destination did not reach it,
// and names the port it was last reached at, so that the rules can join
// the two (docs/metrics.md, "Alerts in a fleet").
func TestNodePortSeries(t *testing.T) {
	e, f, dests := healthExporter(t, "")
	e.traceAll(t, dests)
	_, _, text := seriesCount(t, e)
	self, ok := e.engine().CachedPort()
	if !ok {
		t.Fatal("no cached port")
	}
	want := `ibtracer_local_port_info{node_guid="` + self.NodeGUID.String() + `",node_name="H0-0",port_guid="` + self.PortGUID.String() + `"} 1`
	if !strings.Contains(string(text), want+"\n") {
		t.Errorf("no %s in:\n%s", want, grep(string(text), "ibtracer_local_port_info"))
	}
	if n := strings.Count(string(text), "\nibtracer_destination_last_port_info{"); n != 0 {
		t.Fatalf("%d destination_last_port_info series while every destination is reached:\n%s", n, grep(string(text), "last_port_info"))
	}
	// The destination's only cable goes down: its traces fail.
	dest := dests[len(dests)-1]
	last := e.dests.get(dest).last
	h := last.Hops[len(last.Hops)-1]
	if err := f.SetLinkState(dest, 1, false, false); err != nil {
		t.Fatal(err)
	}
	e.traceOnce(t.Context(), e.dests.get(dest), time.Minute)
	if r := e.dests.get(dest).last; r.Status == trace.StatusOK {
		t.Fatalf("%s still reached with its cable down", dest)
	}
	_, _, text = seriesCount(t, e)
	want = `ibtracer_destination_last_port_info{dest="` + dest + `",node_guid="` + h.NodeGUID.String() + `",node_name="` + dest +
		`",port_guid="` + h.PortGUID.String() + `"} 1`
	if !strings.Contains(string(text), want+"\n") || strings.Count(string(text), "\nibtracer_destination_last_port_info{") != 1 {
		t.Errorf("want only %s:\n%s", want, grep(string(text), "last_port_info"))
	}
	// Back: the series goes.
	if err := f.SetLinkState(dest, 1, true, false); err != nil {
		t.Fatal(err)
	}
	e.traceOnce(t.Context(), e.dests.get(dest), time.Minute)
	if r := e.dests.get(dest).last; r.Status != trace.StatusOK {
		t.Fatalf("%s not reached with its cable up again: %v %v", dest, r.Status, r.Err)
	}
	_, _, text = seriesCount(t, e)
	if n := strings.Count(string(text), "\nibtracer_destination_last_port_info{"); n != 0 {
		t.Errorf("%d destination_last_port_info series once %s is reached again:\n%s", n, dest, grep(string(text), "last_port_info"))
	}
}
