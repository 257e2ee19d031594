//go:build cgo && ibcref

package ibmad_test

// The PerfMgt ClassPortInfo capability bits the link health reads (and
// the simulated PMA sets) checked against OpenSM's headers, through the
// test-only cgo package internal/osmref.

import (
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	ref "github.com/ibtracer/ibtracer_exporter/ibmad/internal/osmref"
)

func TestPerfMgtCapabilityBitsMatchOpenSM(t *testing.T) {
	for _, c := range []struct {
		name      string
		ours, osm uint32
	}{
		{"AllPortSelect", uint32(ibmad.CPICapPMAllPort), uint32(ref.PMAllPortSelect)},
		{"PortCountersExtended", uint32(ibmad.CPICapPMExtWidth), uint32(ref.PMExtWidthSupported)},
		{"extended, no IETF", uint32(ibmad.CPICapPMExtNoIETF), uint32(ref.PMExtWidthNoIETF)},
		{"PortXmitWait", uint32(ibmad.CPICapPMXmitWait), uint32(ref.PMXmitWaitSupported)},
		{"RS-FEC counters", uint32(ibmad.CPICapPMRSFEC), uint32(ref.PMRSFECCounters)},
		{"CapabilityMask2: additional PortCountersExtended", ibmad.CPICap2PMAddlPortCtrsExt, ref.PMAddlPortCtrsExt},
	} {
		if c.ours != c.osm {
			t.Errorf("%s: ours 0x%x, OpenSM's 0x%x", c.name, c.ours, c.osm)
		}
	}
}
