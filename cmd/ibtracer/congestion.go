package main

import (
	"fmt"
	"strings"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

// congestionColumn is a link's congestion for -v (docs/metrics.md,
// "Congestion"): the share of the interval its waiting end could not
// send and that end's waiting VL, or, from one reading, the VLs whose
// PortVLXmitWait is not 0.
func congestionColumn(l linkhealth.Link) string {
	var s string
	if l.XmitWaitEnd != "" {
		s = fmt.Sprintf(" xmit wait %.2f%% at %s", 100*l.XmitWaitRatio, l.XmitWaitEnd)
		if l.XmitWaitVL != nil {
			s += fmt.Sprintf(" (VL %d)", *l.XmitWaitVL)
		}
		return s
	}
	for _, e := range []struct {
		n string
		e *linkhealth.LinkEnd
	}{{"a", &l.A}, {"b", &l.B}} {
		c := e.e.Counters
		if c == nil || c.VLXmitWait == nil || c.VLXmitWait.Increments != nil {
			continue
		}
		var vls []string
		for vl, v := range c.VLXmitWait.Values {
			if v > 0 {
				vls = append(vls, fmt.Sprintf("VL%d=%d", vl, v))
			}
		}
		if len(vls) > 0 {
			s += fmt.Sprintf(" %s waits on %s", e.n, strings.Join(vls, ","))
		}
	}
	return s
}
