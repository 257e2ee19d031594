//go:build cgo && ibcref

package ibmad_test

import (
	"fmt"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	c "github.com/ibtracer/ibtracer_exporter/ibmad/internal/cmadref"
)

// vlXmitWaitCase is PortVLXmitWaitCounters for TestAgainstLibibmad: our
// codec against libibmad's IB_PC_PORT_VL_XMIT_WAIT0_F..15_F and the
// PortSelect and CounterSelect fields libibmad shares with PortCounters.
func vlXmitWaitCase() attrCase {
	ids := []field{f(c.PC_VL_XMIT_WAIT_PORT_SELECT, "PortSelect"), f(c.PC_VL_XMIT_WAIT_COUNTER_SELECT, "CounterSelect")}
	for vl, id := range c.PC_VL_XMIT_WAIT {
		ids = append(ids, f(id, fmt.Sprintf("PortVLXmitWait%d", vl)))
	}
	return attrCase{
		name: "PortVLXmitWaitCounters", span: ibmad.PortVLXmitWaitCountersSize, fields: ids,
		ours: func(b []byte) (map[int]val, []byte, error) {
			var p ibmad.PortVLXmitWaitCounters
			if err := p.UnmarshalBinary(b); err != nil {
				return nil, nil, err
			}
			out, err := p.MarshalBinary()
			m := map[int]val{c.PC_VL_XMIT_WAIT_PORT_SELECT: u(uint64(p.PortSelect)),
				c.PC_VL_XMIT_WAIT_COUNTER_SELECT: u(uint64(p.CounterSelect))}
			for vl, id := range c.PC_VL_XMIT_WAIT {
				m[id] = u(uint64(p.PortVLXmitWait[vl]))
			}
			return m, out, err
		},
	}
}

// TestVLXmitWaitAttrIDMatchesLibibmad: our attribute ID is libibmad's
// IB_GSI_PORT_PORT_VL_XMIT_WAIT_COUNTERS, and libibmad's 16 VL fields
// cover exactly data bytes 4-35, two bytes a VL, in VL order.
func TestVLXmitWaitAttrIDMatchesLibibmad(t *testing.T) {
	if uint16(ibmad.AttrPortVLXmitWaitCounters) != uint16(c.GSI_PORT_VL_XMIT_WAIT_COUNTERS) {
		t.Fatalf("attribute ID %#x, libibmad %#x", uint16(ibmad.AttrPortVLXmitWaitCounters), c.GSI_PORT_VL_XMIT_WAIT_COUNTERS)
	}
	for vl, id := range c.PC_VL_XMIT_WAIT {
		buf := make([]byte, 256)
		cencode(buf, f(id, ""), u(0xffff))
		for i, b := range buf {
			in := i == 4+2*vl || i == 5+2*vl
			if (b == 0xff) != in || (b != 0 && b != 0xff) {
				t.Fatalf("libibmad's PortVLXmitWait%d sets byte %d to %#x", vl, i, b)
			}
		}
	}
}
