package trace

import (
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// SLFrom says where the SL of a trace's validation MADs came from.
type SLFrom string

// Where an SL comes from (docs/protocol.md, "SL and GRH").
const (
	// SLFromPathRecord: the SA's PathRecord to the destination (a GID,
	// GUID or node destination, when no SL was configured).
	SLFromPathRecord SLFrom = "path_record"
	// SLFromOption: --sl or sl: (Options.SL is a FixedSL).
	SLFromOption SLFrom = "option"
	// SLFromDefault: a LID destination, which has no PathRecord, and no
	// SL was configured: Options.SL (0 unless a DefaultSL).
	SLFromDefault SLFrom = "default"
)

// grhHopLimit is the hop limit of a GRH to another subnet whose PathRecord
// gives 0 or 1 (a GRH with hop limit 0 or 1 cannot cross a router):
// libibmad's, 255.
const grhHopLimit = 0xFF

// Addressing is how a trace addresses its validation MADs (vendor agent
// and SMA): the SL, and the GRH the vendor MADs to the destination carry
// (docs/protocol.md, "SL and GRH"). A Result carries it so that the
// report says which SL and whether a GRH was used.
type Addressing struct {
	SL     uint8
	SLFrom SLFrom
	// GRH: the vendor MADs to the destination carry a global route
	// header with DGID, HopLimit, TClass and FlowLabel from its
	// PathRecord. SMPs never do (QP0 traffic is subnet-local).
	GRH       bool
	DGID      ibmad.GID
	HopLimit  uint8
	TClass    uint8
	FlowLabel uint32
}

// AddressingFor is how a trace with these options addresses the
// validation MADs of a destination resolved by PathRecord pr (nil for a
// LID destination) from the local port src.
func (o *Options) AddressingFor(pr *ibmad.PathRecord, src ibmad.PortAttributes) Addressing {
	a := Addressing{SL: o.SL.sl, SLFrom: SLFromDefault}
	if o.SL.fixed {
		a.SLFrom = SLFromOption
	}
	if pr == nil {
		return a
	}
	if !o.SL.fixed {
		a.SL, a.SLFrom = pr.SL, SLFromPathRecord
	}
	remote := pr.DGID.Prefix() != prefixOf(src)
	if pr.HopLimit > 1 || remote {
		a.GRH, a.DGID, a.HopLimit, a.TClass, a.FlowLabel = true, pr.DGID, pr.HopLimit, pr.TClass, pr.FlowLabel
		if remote && a.HopLimit <= 1 {
			a.HopLimit = grhHopLimit
		}
	}
	return a
}

// GMPAddress is the address of a vendor MAD to lid: the SL, and the GRH
// when toDest (the MAD goes to the destination) and a GRH is used. The
// hops before the destination are in our subnet, and their GIDs are not
// the DGID: their MADs carry the SL only.
func (a Addressing) GMPAddress(lid uint16, toDest bool) ibmad.Address {
	addr := ibmad.GSIAddress(lid, a.SL)
	if a.GRH && toDest {
		addr.GRHPresent, addr.GID, addr.HopLimit, addr.TClass, addr.FlowLabel = true, a.DGID, a.HopLimit, a.TClass, a.FlowLabel
	}
	return addr
}

// SMPAddress is the address of a LID-routed SMP (validation by the SMA)
// to lid: the SL, never a GRH.
func (a Addressing) SMPAddress(lid uint16) ibmad.Address {
	addr := ibmad.SMPAddress(lid)
	addr.SL = a.SL
	return addr
}

// String is the addressing as ibtracer -v shows it.
func (a Addressing) String() string {
	from := map[SLFrom]string{SLFromPathRecord: "from the PathRecord", SLFromOption: "from --sl/sl:", SLFromDefault: "default"}[a.SLFrom]
	s := fmt.Sprintf("SL %d (%s)", a.SL, from)
	if !a.GRH {
		return s + ", no GRH"
	}
	return s + fmt.Sprintf(", GRH to %s hop limit %d traffic class %d flow label 0x%05x", a.DGID, a.HopLimit, a.TClass, a.FlowLabel)
}

// JSONAddressing is the addressing in a JSON result.
type JSONAddressing struct {
	SL        uint8  `json:"sl"`
	SLFrom    string `json:"sl_from"`
	GRH       bool   `json:"grh"`
	DGID      string `json:"grh_dgid,omitempty"`
	HopLimit  uint8  `json:"grh_hop_limit,omitempty"`
	TClass    uint8  `json:"grh_traffic_class,omitempty"`
	FlowLabel uint32 `json:"grh_flow_label,omitempty"`
}

// JSON is the report form of a (nil for a trace that sends no validation
// MAD: a multicast trace).
func (a *Addressing) JSON() *JSONAddressing {
	if a == nil || a.SLFrom == "" {
		return nil
	}
	j := &JSONAddressing{SL: a.SL, SLFrom: string(a.SLFrom), GRH: a.GRH}
	if a.GRH {
		j.DGID, j.HopLimit, j.TClass, j.FlowLabel = a.DGID.String(), a.HopLimit, a.TClass, a.FlowLabel
	}
	return j
}

// prefixOf is the local port's GID prefix (the default one when unset).
func prefixOf(src ibmad.PortAttributes) uint64 {
	if src.GIDPrefix == 0 {
		return ibmad.DefaultGIDPrefix
	}
	return src.GIDPrefix
}

// routerAddressing is how the validation MADs of a trace to a GID of
// another subnet are sent: they end at the router's port in our subnet
// (P1.DLID) or before it, so they carry P1's SL (unless --sl/sl: is
// given) and no GRH; only the remote SA query crosses the router
// (remoteSAAddress).
func (o *Options) routerAddressing(p1 ibmad.PathRecord, src ibmad.PortAttributes) Addressing {
	a := o.AddressingFor(&p1, src)
	a.GRH, a.DGID, a.HopLimit, a.TClass, a.FlowLabel = false, ibmad.GID{}, 0, 0, 0
	return a
}
