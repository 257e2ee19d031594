package main

import (
	"testing"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

func TestCongestionColumn(t *testing.T) {
	vl := 5
	for _, c := range []struct {
		l    linkhealth.Link
		want string
	}{
		{linkhealth.Link{XmitWaitRatio: 0.1234, XmitWaitKnown: true, XmitWaitEnd: "b", XmitWaitVL: &vl}, " xmit wait 12.34% at b (VL 5)"},
		{linkhealth.Link{XmitWaitRatio: 0.5, XmitWaitEnd: "a"}, " xmit wait 50.00% at a"},
		{linkhealth.Link{XmitWaitKnown: true}, ""},
		{linkhealth.Link{A: linkhealth.LinkEnd{Counters: &linkhealth.PortCounterReading{
			VLXmitWait: &linkhealth.VLXmitWaitReading{Values: []uint64{0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9}}}}},
			" a waits on VL1=3,VL15=9"},
	} {
		if got := congestionColumn(c.l); got != c.want {
			t.Errorf("%+v: %q, want %q", c.l, got, c.want)
		}
	}
}
