package linkhealth

import (
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// describe fills an end's readable fields from its PortInfo.
func (e *LinkEnd) describe() {
	pi := &e.pi
	e.State, e.PhysState = pi.PortState.String(), pi.PortPhysState.String()
	e.speeds = decodeSpeeds(pi, e.capMask)
	e.WidthActive = widthMask(pi.LinkWidthActive)
	e.WidthEnabled, e.WidthSupported = widthMask(pi.LinkWidthEnabled), widthMask(pi.LinkWidthSupported)
	e.SpeedActive = e.speeds.active
	e.SpeedEnabled = speedList(e.speeds.legacyEna, e.speeds.extEna, e.speeds.xdrEna&1 != 0)
	e.SpeedSupported = speedList(e.speeds.legacySup, e.speeds.extSup, e.speeds.xdrSup)
	e.NeighborMTU = mtuBytes(pi.NeighborMTU)
}

func (e *LinkEnd) active() bool {
	return e.pi.PortState == ibmad.PortStateActive && e.pi.PortPhysState == ibmad.PhysStateLinkUp
}

// judge gives a link its figures and verdict.
func (h *Checker) judge(l *Link) {
	a, b := &l.A, &l.B
	l.Kind = KindHost
	if a.NodeType == ibmad.NodeTypeSwitch && b.NodeType == ibmad.NodeTypeSwitch {
		l.Kind = KindSwitch
	}
	l.Healthy = true
	h.judgeCounters(l)
	if (a.ok && !a.active()) || (b.ok && !b.active()) {
		l.Verdict, l.Healthy = LinkNotActive, false
		l.Problems = append(l.Problems, fmt.Sprintf("not active: %s/%s and %s/%s", a.State, a.PhysState, b.State, b.PhysState))
		return
	}
	if !a.ok || !b.ok {
		l.Verdict = LinkUnknown
		return
	}
	// The narrower and slower end is the link (both ends agree on a
	// healthy link).
	wa, wb := widthLanes(a.pi.LinkWidthActive), widthLanes(b.pi.LinkWidthActive)
	l.Width = min(wa, wb)
	l.Speed = min(a.speeds.active, b.speeds.active)
	l.RateBits = float64(l.Width) * l.Speed.LaneBits()
	l.MTUBytes = min(a.NeighborMTU, b.NeighborMTU)
	l.CouldBeWidth = widthLanes(widestBit(a.pi.LinkWidthSupported & b.pi.LinkWidthSupported))
	l.CouldBeSpeed = couldBeSpeed(a.speeds, b.speeds)
	l.CouldBeRateBits = float64(l.CouldBeWidth) * l.CouldBeSpeed.LaneBits()
	// A stated expectation is the standard (ibdiagpath -lw/-ls); without
	// one, what both ends support is (iblinkinfo's "could be").
	exp := h.opts.expectFor(l)
	l.ExpectWidth, l.ExpectSpeed = exp.Width, exp.Speed
	var verdicts []string
	if exp.Width > 0 && l.Width < exp.Width {
		verdicts = append(verdicts, LinkBelowExpected)
		l.Problems = append(l.Problems, fmt.Sprintf("width %dX below the expected %dX (%s link)", l.Width, exp.Width, l.Kind))
	}
	if exp.Speed != SpeedUnknown && l.Speed.LaneBits() < exp.Speed.LaneBits() {
		verdicts = append(verdicts, LinkBelowExpected)
		l.Problems = append(l.Problems, fmt.Sprintf("speed %s below the expected %s (%s link)", l.Speed, exp.Speed, l.Kind))
	}
	if exp.Width == 0 && l.CouldBeWidth != 0 && (wa != l.CouldBeWidth || wb != l.CouldBeWidth) {
		verdicts = append(verdicts, LinkWidthDegraded)
		l.Problems = append(l.Problems, fmt.Sprintf("width %dX, could be %dX", l.Width, l.CouldBeWidth))
	}
	if exp.Speed == SpeedUnknown && l.CouldBeSpeed != SpeedUnknown && (a.speeds.active != l.CouldBeSpeed || b.speeds.active != l.CouldBeSpeed) {
		verdicts = append(verdicts, LinkSpeedDegraded)
		l.Problems = append(l.Problems, fmt.Sprintf("speed %s, could be %s", l.Speed, l.CouldBeSpeed))
	}
	l.Verdict = LinkOK
	if len(verdicts) > 0 {
		l.Verdict, l.Healthy = verdicts[0], false
	}
	h.judgeCongestion(l)
	h.opts.judgeBER(l) // ber.go
	if len(l.OverLimit) > 0 {
		l.Healthy = false
	}
}

// sum judges every link of ph and sums them up for the path.
func (h *Checker) sum(ph *PathHealth) {
	ph.MTUBytes = 0
	for i := range ph.Links {
		l := &ph.Links[i]
		h.judge(l)
		if l.Verdict != LinkOK && l.Verdict != LinkUnknown && l.Verdict != LinkCongested {
			ph.DegradedLinks++
		}
		if l.Congested {
			ph.CongestedLinks++
		}
		if l.XmitWaitRatio > ph.XmitWaitRatio {
			ph.XmitWaitRatio, ph.XmitWaitHop = l.XmitWaitRatio, l.Hop
		}
		if !l.Healthy {
			ph.Healthy = false
		}
		ph.LinkErrors += l.Errors
		if l.Verdict != LinkUnknown && l.Verdict != LinkNotActive {
			if ph.RateBits == 0 || l.RateBits < ph.RateBits {
				ph.RateBits = l.RateBits
			}
			if l.MTUBytes != 0 && (ph.MTUBytes == 0 || l.MTUBytes < ph.MTUBytes) {
				ph.MTUBytes = l.MTUBytes
			}
		}
	}
}
