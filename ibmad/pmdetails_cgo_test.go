//go:build cgo && ibcref

package ibmad_test

// PortRcvErrorDetails, PortXmitDiscardDetails and
// PortExtendedSpeedsCounters (both layouts) against libibmad's fields, in
// TestAgainstLibibmad (libibmad_test.go).

import (
	"fmt"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	c "github.com/ibtracer/ibtracer_exporter/ibmad/internal/cmadref"
)

// detailCase is a detail attribute: PortSelect, CounterSelect, then the
// 16-bit counters libibmad lists in ids, in order.
func detailCase(name string, size int, ids []int, decode func(b []byte) (uint8, uint16, []uint16, []byte, error)) attrCase {
	fields := []field{f(c.PC_PORT_SELECT, "PortSelect"), f(c.PC_COUNTER_SELECT, "CounterSelect")}
	for i, id := range ids {
		fields = append(fields, f(id, fmt.Sprintf("counter%d", i)))
	}
	return attrCase{name: name, span: size, fields: fields,
		ours: func(b []byte) (map[int]val, []byte, error) {
			sel, cs, vs, out, err := decode(b)
			if err != nil {
				return nil, nil, err
			}
			m := map[int]val{c.PC_PORT_SELECT: u(uint64(sel)), c.PC_COUNTER_SELECT: u(uint64(cs))}
			for i, id := range ids {
				m[id] = u(uint64(vs[i]))
			}
			return m, out, nil
		}}
}

func rcvErrorDetailsCase() attrCase {
	return detailCase("PortRcvErrorDetails", ibmad.PortRcvErrorDetailsSize, c.PC_RCV_ERR,
		func(b []byte) (uint8, uint16, []uint16, []byte, error) {
			var p ibmad.PortRcvErrorDetails
			if err := p.UnmarshalBinary(b); err != nil {
				return 0, 0, nil, nil, err
			}
			out, err := p.MarshalBinary()
			return p.PortSelect, p.CounterSelect, []uint16{p.PortLocalPhysicalErrors, p.PortMalformedPacketErrors,
				p.PortBufferOverrunErrors, p.PortDLIDMappingErrors, p.PortVLMappingErrors, p.PortLoopingErrors}, out, err
		})
}

func xmitDiscardDetailsCase() attrCase {
	return detailCase("PortXmitDiscardDetails", ibmad.PortXmitDiscardDetailsSize, c.PC_XMT_DISC,
		func(b []byte) (uint8, uint16, []uint16, []byte, error) {
			var p ibmad.PortXmitDiscardDetails
			if err := p.UnmarshalBinary(b); err != nil {
				return 0, 0, nil, nil, err
			}
			out, err := p.MarshalBinary()
			return p.PortSelect, p.CounterSelect, []uint16{p.PortInactiveDiscards, p.PortNeighborMTUDiscards,
				p.PortSwLifetimeLimitDiscards, p.PortSwHOQLifetimeLimitDiscards}, out, err
		})
}

// extSpeedsCase is PortExtendedSpeedsCounters in one layout: every field
// libibmad has from first to last, in libibmad's order, which is ours:
// PortSelect, CounterSelect (64 bits), SyncHeaderErrorCounter,
// UnknownBlockCounter, then the lane counters (and with RS-FEC the three
// port counters).
func extSpeedsCase(rsfec bool) attrCase {
	first, last, cs, name := c.PESC_FIRST, c.PESC_LAST, c.PESC_COUNTER_SELECT, "PortExtendedSpeedsCounters"
	if rsfec {
		first, last, cs, name = c.PESC_RSFEC_FIRST, c.PESC_RSFEC_LAST, c.PESC_RSFEC_COUNTER_SELECT, name+"RSFEC"
	}
	var fields []field
	for id := first; id < last; id++ {
		fl := f(id, fmt.Sprintf("field%d", id-first))
		if id == cs {
			fl = f64(id, "CounterSelect")
		}
		fields = append(fields, fl)
	}
	return attrCase{name: name, span: ibmad.PortExtendedSpeedsCountersSize, fields: fields,
		ours: func(b []byte) (map[int]val, []byte, error) {
			p := ibmad.PortExtendedSpeedsCounters{RSFEC: rsfec}
			if err := p.UnmarshalBinary(b); err != nil {
				return nil, nil, err
			}
			out, err := p.MarshalBinary()
			vs := []uint64{uint64(p.PortSelect), p.CounterSelect, uint64(p.SyncHeaderErrorCounter), uint64(p.UnknownBlockCounter)}
			if rsfec {
				for _, v := range p.FECCorrectableSymbolCounterLane {
					vs = append(vs, uint64(v))
				}
				vs = append(vs, uint64(p.PortFECCorrectableBlockCounter), uint64(p.PortFECUncorrectableBlockCounter),
					uint64(p.PortFECCorrectedSymbolCounter))
			} else {
				for _, v := range p.ErrorDetectionCounterLane {
					vs = append(vs, uint64(v))
				}
				for _, v := range p.FECCorrectableBlockCounterLane {
					vs = append(vs, uint64(v))
				}
				for _, v := range p.FECUncorrectableBlockCounterLane {
					vs = append(vs, uint64(v))
				}
			}
			if len(vs) != len(fields) {
				return nil, nil, fmt.Errorf("%d values of ours, %d fields of libibmad", len(vs), len(fields))
			}
			m := map[int]val{}
			for i, fl := range fields {
				m[fl.id] = u(vs[i])
			}
			return m, out, err
		}}
}

// TestPMDetailsMatchLibibmad: the attribute IDs are libibmad's, and our
// field lists reach libibmad's end markers (no field of libibmad's left
// out of TestAgainstLibibmad).
func TestPMDetailsMatchLibibmad(t *testing.T) {
	for _, x := range []struct {
		ours, theirs uint16
	}{{uint16(ibmad.AttrPortRcvErrorDetails), uint16(c.GSI_PORT_RCV_ERROR_DETAILS)},
		{uint16(ibmad.AttrPortXmitDiscardDetails), uint16(c.GSI_PORT_XMIT_DISCARD_DETAILS)},
		{uint16(ibmad.AttrPortExtendedSpeedsCounters), uint16(c.GSI_PORT_EXT_SPEEDS_COUNTERS)}} {
		if x.ours != x.theirs {
			t.Errorf("attribute ID %#x, libibmad's %#x", x.ours, x.theirs)
		}
	}
	if n := len(c.PC_RCV_ERR); c.PC_RCV_ERR[n-1]+1 != c.LastRcvErr {
		t.Errorf("libibmad has PortRcvErrorDetails fields past ours")
	}
	if n := len(c.PC_XMT_DISC); c.PC_XMT_DISC[n-1]+1 != c.LastXmtDisc {
		t.Errorf("libibmad has PortXmitDiscardDetails fields past ours")
	}
}
