package sim

import (
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// TestPMAErrorsAndCapabilities: errors added show in PortCounters,
// PortCountersExtended and the detail attributes; a Set clears the
// details; CapabilityMask2 follows SetPMACapabilityMask2, and without bit
// 1 PortCountersExtended carries the data counters only, as ibsim's does;
// a PMA without PortExtendedSpeedsCounters refuses it.
func TestPMAErrorsAndCapabilities(t *testing.T) {
	topo, _ := FatTree2(2, 2, 2, 1)
	f, err := New(topo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	leaf := f.Node("L0")
	if err := f.AddPortErrors("L0", 1, PortErrors{SymbolErrors: 70000, RcvErrors: 5, XmitDiscards: 3,
		RcvErrorDetails: [6]uint64{5}, XmitDiscardDetails: [4]uint64{0, 0, 0, 3}}); err != nil {
		t.Fatal(err)
	}
	if err := f.AddPortErrors("L0", 99, PortErrors{}); err == nil {
		t.Fatal("AddPortErrors on port 99: no error")
	}
	get := func(attr ibmad.AttrID, out interface{ UnmarshalBinary([]byte) error }, meth ibmad.Method) ibmad.Status {
		st, data := pmaAsk(t, f, leaf, meth, attr, 1)
		if st == ibmad.StatusOK {
			if err := out.UnmarshalBinary(data); err != nil {
				t.Fatal(err)
			}
		}
		return st
	}
	var pc ibmad.PortCounters
	var pce ibmad.PortCountersExtended
	var rd ibmad.PortRcvErrorDetails
	var xd ibmad.PortXmitDiscardDetails
	get(ibmad.AttrPortCounters, &pc, ibmad.MethodGet)
	get(ibmad.AttrPortCountersExtended, &pce, ibmad.MethodGet)
	get(ibmad.AttrPortRcvErrorDetails, &rd, ibmad.MethodGet)
	get(ibmad.AttrPortXmitDiscardDetails, &xd, ibmad.MethodGet)
	if pc.SymbolErrorCounter != 0xFFFF || pce.SymbolErrorCounter != 70000 || pc.PortRcvErrors != 5 ||
		rd.PortLocalPhysicalErrors != 5 || xd.PortSwHOQLifetimeLimitDiscards != 3 {
		t.Fatalf("PortCounters %+v\nextended %+v\ndetails %+v %+v", pc, pce, rd, xd)
	}
	get(ibmad.AttrPortRcvErrorDetails, &rd, ibmad.MethodSet)
	if get(ibmad.AttrPortRcvErrorDetails, &rd, ibmad.MethodGet); rd.PortLocalPhysicalErrors != 0 {
		t.Fatalf("after a Set: %+v", rd)
	}
	var none uint32
	if err := f.SetPMACapabilityMask2("L0", &none); err != nil {
		t.Fatal(err)
	}
	var cpi ibmad.ClassPortInfo
	get(ibmad.AttrClassPortInfo, &cpi, ibmad.MethodGet)
	get(ibmad.AttrPortCountersExtended, &pce, ibmad.MethodGet)
	if cpi.CapabilityMask2 != 0 || cpi.CapabilityMask&ibmad.CPICapPMExtWidth == 0 || pce.SymbolErrorCounter != 0 {
		t.Fatalf("CapabilityMask2 0: ClassPortInfo %#x/%#x, extended %+v", cpi.CapabilityMask, cpi.CapabilityMask2, pce)
	}
	if err := f.SetPMAExtendedSpeeds("L0", false, true); err != nil {
		t.Fatal(err)
	}
	var es ibmad.PortExtendedSpeedsCounters
	if st := get(ibmad.AttrPortExtendedSpeedsCounters, &es, ibmad.MethodGet); st != ibmad.StatusMethodAttrUnsupp {
		t.Fatalf("PortExtendedSpeedsCounters without it: status %v", st)
	}
}
