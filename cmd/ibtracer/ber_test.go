package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

func TestBERFlags(t *testing.T) {
	for _, c := range []struct {
		f    healthFlags
		fail string
	}{
		{healthFlags{ber: -time.Second}, "negative"},
		{healthFlags{ber: time.Second, pmInterval: 2 * time.Second}, "one window"},
		{healthFlags{berTarget: 2}, "between 0 and 1"},
	} {
		if _, _, err := c.f.options(); err == nil || !strings.Contains(err.Error(), c.fail) {
			t.Errorf("%+v: %v, want %q", c.f, err, c.fail)
		}
	}
	f := healthFlags{ber: 30 * time.Second, berTarget: 1e-14}
	o, ok, err := f.options()
	if err != nil || !ok || !o.Counters || !o.DataCounters || o.BERTarget != 1e-14 || f.pmInterval != 30*time.Second || o.LimitValues {
		t.Fatalf("--ber 30s --ber-target 1e-14: %+v %v %v, interval %s", o, ok, err, f.pmInterval)
	}
}

func TestBERColumnAndDetails(t *testing.T) {
	l := linkhealth.Link{BERState: linkhealth.BERNotYetKnown, BERWindowSeconds: 10, BERTarget: 1e-12, RateBits: 40e9}
	if got := berColumn(l); got != " BER not yet known (window 10s; 1e-12 needs 25s)" {
		t.Errorf("not yet known: %q", got)
	}
	if got := berColumn(linkhealth.Link{BERState: linkhealth.BERNotYetKnown, BERTarget: 1e-12}); !strings.Contains(got, "one reading") {
		t.Errorf("one reading: %q", got)
	}
	l = linkhealth.Link{BERState: linkhealth.BERAboveTarget, BER: 8.3e-11, BEREnd: "b", BERWindowSeconds: 30, BERTarget: 1e-12}
	if got := berColumn(l); got != " BER 8.3e-11 at b over 30s (target 1e-12): above_target" {
		t.Errorf("above target: %q", got)
	}
	l.A = linkhealth.LinkEnd{NodeName: "sw1", Port: 3, Counters: &linkhealth.PortCounterReading{
		Data:            map[string]uint64{"PortXmitData": 7, "PortRcvData": 0},
		RcvErrorDetails: map[string]uint64{"PortLocalPhysicalErrors": 5, "PortLoopingErrors": 0},
		FEC:             &linkhealth.FECReading{Corrected: 10, Uncorrectable: 1, Known: true, UncorrectableInc: 1},
	}}
	var b bytes.Buffer
	writeEndDetails(&b, l)
	want := "    " + l.A.Label() + "[3]: extended PortRcvData=0,PortXmitData=7; rcv error details PortLocalPhysicalErrors=5; " +
		"FEC blocks corrected 10, uncorrectable 1 (+0, +1)\n"
	if b.String() != want {
		t.Errorf("details:\n%q\nwant\n%q", b.String(), want)
	}
}
