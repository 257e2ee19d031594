package collector

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// TestBERSeries: only the link end whose symbol errors rose gets the BER
// counters (its errors and the bits carried between its readings), the
// targets are the defaults per kind, and link_info names the link's ends
// for the alerts.
func TestBERSeries(t *testing.T) {
	e, f, dests := healthExporter(t, "health: {enabled: true}\n")
	e.Stop()
	e.traceAll(t, dests)
	out := scrape(t, e)
	if strings.Contains(out, "ibtracer_link_symbol_errors_total{") || strings.Contains(out, "ibtracer_link_ber_bits_total{") {
		t.Fatalf("BER series before any error:\n%s", grep(out, "ber", "symbol"))
	}
	r := e.dests.get(dests[len(dests)-1]).last
	a, b := r.Hops[1], r.Hops[2]
	bn := f.NodeByGUID(b.NodeGUID)
	e.clock.(*fakeClock).Add(time.Hour + time.Second)
	e.traceAll(t, dests) // the first window: no error yet
	if err := f.AddPortErrors(bn.Name, int(b.InPort), sim.PortErrors{SymbolErrors: 7}); err != nil {
		t.Fatal(err)
	}
	e.clock.(*fakeClock).Add(time.Hour + time.Second)
	e.traceAll(t, dests)
	out = scrape(t, e)
	ends, end := fmt.Sprintf(`node_guid="%s",port="%d",remote_node_guid="%s",remote_port="%d"`, a.NodeGUID, a.OutPort, b.NodeGUID, b.InPort), "remote"
	if b.NodeGUID < a.NodeGUID {
		ends, end = fmt.Sprintf(`node_guid="%s",port="%d",remote_node_guid="%s",remote_port="%d"`, b.NodeGUID, b.InPort, a.NodeGUID, a.OutPort), "local"
	}
	lbl := `{end="` + end + `",kind="switch",` + ends + "}"
	for _, want := range []string{
		"ibtracer_link_symbol_errors_total" + lbl + " 7",
		// 4X QDR, 40 Gb/s, over the 3,601 s since the reading before the
		// first error (not since the first reading: the series' first
		// sample is then the burst's BER, docs/metrics.md)
		"ibtracer_link_ber_bits_total" + lbl + " 1.4404e+14",
		`ibtracer_link_ber_target{kind="host",severity="warning"} 1e-15`,
		`ibtracer_link_ber_target{kind="switch",severity="critical"} 1e-14`,
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %s in\n%s", want, grep(out, "ber", "symbol", "link_info"))
		}
	}
	info := grep(out, "ibtracer_link_info{")
	if want := strings.Split(ends, ","); !strings.Contains(info, want[0]+",") || !strings.Contains(info, want[2]+",") {
		t.Fatalf("no link_info of the link %s:\n%s", ends, info)
	}
	if n := strings.Count(out, "ibtracer_link_symbol_errors_total{"); n != 1 {
		t.Fatalf("%d symbol error series, want 1 (the one end whose errors rose):\n%s", n, grep(out, "symbol"))
	}
	if n := strings.Count(out, "ibtracer_link_ber_target{"); n != 4 {
		t.Fatalf("%d target series, want 4", n)
	}
	if strings.Contains(out, "ibtracer_link_fec_") {
		t.Fatalf("FEC series on a QDR fabric:\n%s", grep(out, "fec"))
	}
}

// TestBERSeriesNotForCorrectedFEC: review 1, finding 5. RS-FEC corrects
// blocks all the time on a healthy HDR link: corrected blocks alone make
// no series; an uncorrectable one does.
func TestBERSeriesNotForCorrectedFEC(t *testing.T) {
	e, f, dests := healthExporter(t, "health: {enabled: true}\n")
	e.Stop()
	e.traceAll(t, dests)
	r := e.dests.get(dests[len(dests)-1]).last
	a, b := r.Hops[1], r.Hops[2]
	an, bn := f.NodeByGUID(a.NodeGUID), f.NodeByGUID(b.NodeGUID)
	hdr := &sim.LinkTraining{WidthActive: 2, WidthSupported: 2, ExtActive: 4, ExtSupported: 4}
	if err := f.SetLinkTraining(an.Name, int(a.OutPort), hdr); err != nil {
		t.Fatal(err)
	}
	for range 2 { // PortInfo is read again after an hour
		e.clock.(*fakeClock).Add(time.Hour + time.Second)
		e.traceAll(t, dests)
	}
	if err := f.AddPortErrors(bn.Name, int(b.InPort), sim.PortErrors{FECCorrected: 100000}); err != nil {
		t.Fatal(err)
	}
	e.clock.(*fakeClock).Add(time.Hour + time.Second)
	e.traceAll(t, dests)
	if out := scrape(t, e); strings.Contains(out, "ibtracer_link_symbol_errors_total{") || strings.Contains(out, "ibtracer_link_fec_") {
		t.Fatalf("series for corrected FEC blocks alone:\n%s", grep(out, "symbol", "fec"))
	}
	if err := f.AddPortErrors(bn.Name, int(b.InPort), sim.PortErrors{FECUncorrectable: 1}); err != nil {
		t.Fatal(err)
	}
	e.clock.(*fakeClock).Add(time.Hour + time.Second)
	e.traceAll(t, dests)
	out := scrape(t, e)
	if n := strings.Count(out, "ibtracer_link_fec_uncorrectable_blocks_total{"); n != 1 || !strings.Contains(out, "ibtracer_link_fec_corrected_blocks_total{") {
		t.Fatalf("%d uncorrectable series after one uncorrectable block, want 1:\n%s", n, grep(out, "symbol", "fec"))
	}
}
