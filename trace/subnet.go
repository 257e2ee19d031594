package trace

import (
	"errors"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// StatusLeftSubnet: the destination's GID is in another subnet; the
// trace walked to the router where the path leaves this one and
// reported the remote part as far as the remote SA shows it. Not a
// failure (docs/architecture.md, "Paths that leave the subnet").
const StatusLeftSubnet Status = "left_subnet"

// ReasonRouter: the path left the subnet at a router, and the remote
// subnet's SA did not answer through it: the router does not forward.
const ReasonRouter Reason = "router_not_forwarding"

// saWellKnownGUID is the interface ID of an SA's well-known GID: a MAD to
// the SA of another subnet goes to that subnet's prefix and this ID
// (docs/protocol.md, "Paths that leave the subnet").
const saWellKnownGUID ibmad.GUID = 1<<57 | 2

// remoteEntry is what resolving a GID of another subnet kept: the local
// SA's PathRecord to it (P1), whose DLID is the router port's LID.
type remoteEntry struct {
	p1 ibmad.PathRecord
}

// Beyond is the part of a path past the router where it leaves the
// subnet, as far as it can be seen from here: SMPs do not cross a
// router, so the remote subnet's hops are not walked; its SA tells where
// the path enters that subnet and where it ends.
type Beyond struct {
	DGID ibmad.GID
	// The router: the trace's last hop, entered by RouterInPort.
	Router       ibmad.GUID
	RouterInPort uint8
	// Local is the local SA's path to the router (P1): its SL, hop limit,
	// traffic class and flow label go on the GRH of what crosses.
	Local ibmad.PathRecord
	// Remote is the remote SA's path from the destination back to us
	// (P2; nil: it did not answer): its SLID is the destination's LID
	// there, its DLID the router port's LID there.
	Remote *ibmad.PathRecord
	// From the remote SA's NodeRecords of those LIDs (zero: not known).
	RemoteRouter     ibmad.GUID // the node GUID of the router port P2 ends at
	RemoteRouterPort uint8      // its port number in the remote subnet
	NodeGUID         ibmad.GUID // the destination's node
	NodeType         ibmad.NodeType
	NodeDesc         string
	// Note says what could not be seen, or that the reverse path
	// enters another router.
	Note string
}

// foreign says whether dgid is in another subnet than the local port's:
// another prefix, and not link-local (fe80::/10 never leaves a subnet).
func foreign(src ibmad.PortAttributes, dgid ibmad.GID) bool {
	p := dgid.Prefix()
	return p != src.GID().Prefix() && p&0xFFC0_0000_0000_0000 != 0xFE80_0000_0000_0000
}

// routerPath resolves a GID of another subnet as the openib-general
// routing discussion has it: the local SA's PathRecord from our GID to
// it, whose DLID is the port of the router that leads there
// (docs/protocol.md).
func (rs *resolver) routerPath(w *walk, d Destination, dgid ibmad.GID) (uint16, *remoteEntry, *Error) {
	data, ferr := rs.askLocalSA(w, d, "PathRecord", ibmad.AttrPathRecord, ibmad.PRCompDGID|ibmad.PRCompSGID,
		wire(&ibmad.PathRecord{DGID: dgid, SGID: w.src.GID()}))
	if ferr != nil {
		if ferr.Reason == ReasonSA && ferr.Err == nil {
			ferr.Msg += fmt.Sprintf(" (GID prefix %s is not this subnet's: does the SA know a router to it?)", prefixString(dgid.Prefix()))
		}
		return 0, nil, ferr
	}
	var pr ibmad.PathRecord
	_ = pr.UnmarshalBinary(data)
	if pr.DLID == 0 {
		return 0, nil, fail(StatusResolve, ReasonSA, nil, "resolving %s: the SA answered DLID 0", d.Address())
	}
	return pr.DLID, &remoteEntry{p1: pr}, nil
}

// remoteSAAddress is where the remote subnet's SA is asked, by the local
// SA's path p1: the router port's LID and p1's SL, with a GRH to the SA's
// well-known GID of the remote prefix carrying p1's hop limit (255 for
// 0 or 1, which could not cross the router), traffic class and flow
// label: the GRH of addressing.go for a destination in another subnet.
func remoteSAAddress(p1 ibmad.PathRecord, src ibmad.PortAttributes) ibmad.Address {
	sa := p1
	sa.DGID = ibmad.MakeGID(p1.DGID.Prefix(), saWellKnownGUID)
	return (&Options{}).AddressingFor(&sa, src).GMPAddress(p1.DLID, true)
}

// ask sends one SA Get to the remote subnet's SA through the router: the
// record's data, or the SA's non-zero status, or the error of a request
// that got no answer.
func (e *remoteEntry) ask(w *walk, attr ibmad.AttrID, mask uint64, tmpl []byte) ([]byte, ibmad.Status, error) {
	return w.askSA(remoteSAAddress(e.p1, w.src), attr, mask, tmpl)
}

// beyond finishes a trace to a GID of another subnet whose walk reached
// a router: the status becomes left_subnet, and the remote SA is asked
// where the router forwards to the destination (the reverse path, P2),
// then who the two ends are. A router that passes nothing on makes the
// trace fail with reason router_not_forwarding, the local hops kept. A
// walk that ended at a port of this subnet is left alone (Tracer.named
// checks it is the port the GID names: resolution.wrongPort). A trace
// to this subnet has no remoteEntry: nothing to do.
func (e *remoteEntry) beyond(w *walk, r *Result) {
	if e == nil || len(r.Hops) == 0 || r.Status != StatusOK {
		return
	}
	last := &r.Hops[len(r.Hops)-1]
	if last.NodeType != ibmad.NodeTypeRouter {
		return
	}
	b := &Beyond{DGID: e.p1.DGID, Router: last.NodeGUID, RouterInPort: last.InPort, Local: e.p1}
	r.Beyond, r.Status = b, StatusLeftSubnet
	where := fmt.Sprintf("%s port %d", name(last), last.InPort)
	// The path back, as the remote subnet sees it: its SGID (the
	// destination) is local there; an SA refuses a non-local SGID
	// (docs/protocol.md, "Paths that leave the subnet").
	data, st, err := e.ask(w, ibmad.AttrPathRecord, ibmad.PRCompDGID|ibmad.PRCompSGID,
		wire(&ibmad.PathRecord{SGID: e.p1.DGID, DGID: w.src.GID()}))
	if ferr := remoteFail(r.Destination, where, e.p1.DGID, err, st); ferr != nil {
		b.Note = ferr.Msg
		r.Status, r.Reason, r.Err = ferr.Status, ferr.Reason, ferr
		return
	}
	var p2 ibmad.PathRecord
	_ = p2.UnmarshalBinary(data)
	b.Remote = &p2
	var notes []string
	if rt, ok := e.remoteNode(w, p2.DLID); ok {
		b.RemoteRouter, b.RemoteRouterPort = rt.NodeInfo.NodeGUID, rt.NodeInfo.LocalPortNum
		if rt.NodeInfo.NodeGUID == last.NodeGUID {
			last.OutPort = rt.NodeInfo.LocalPortNum
		} else {
			notes = append(notes, fmt.Sprintf("the remote SA's path back ends at router %s, not at %s: the reverse path crosses another router",
				rt.NodeInfo.NodeGUID, last.NodeGUID))
		}
	} else {
		notes = append(notes, fmt.Sprintf("the remote SA did not name the node of LID %d (the router's port there)", p2.DLID))
	}
	if dst, ok := e.remoteNode(w, p2.SLID); ok {
		b.NodeGUID, b.NodeType, b.NodeDesc = dst.NodeInfo.NodeGUID, dst.NodeInfo.NodeType, dst.NodeDescription.String()
	} else {
		notes = append(notes, fmt.Sprintf("the remote SA did not name the node of LID %d (the destination)", p2.SLID))
	}
	for i, n := range notes {
		if i > 0 {
			b.Note += "; "
		}
		b.Note += n
	}
}

// remoteFail classifies the remote SA's PathRecord answer, err or status
// st (nil: a record).
func remoteFail(d Destination, where string, dgid ibmad.GID, err error, st ibmad.Status) *Error {
	prefix := prefixString(dgid.Prefix())
	switch {
	case errors.Is(err, ibmad.ErrClosed) || errors.Is(err, ibmad.ErrDeviceLost) || errors.Is(err, ibmad.ErrRequestRefused):
		return fail(StatusDevice, ReasonDevice, err, "%s: asking the SA of subnet %s: %v", d.Address(), prefix, err)
	case errors.Is(err, ibmad.ErrTimeout):
		return fail(StatusUnreachable, ReasonRouter, err,
			"%s: the path leaves the subnet at %s, but the SA of subnet %s did not answer through it (%v): the router does not forward to that subnet",
			d.Address(), where, prefix, err)
	case err != nil:
		return fail(StatusUnreachable, ReasonRouter, err, "%s: asking the SA of subnet %s through %s: %v", d.Address(), prefix, where, err)
	}
	switch {
	case st == 0:
		return nil
	case st.ClassSpecific() == ibmad.SAStatusNoRecords:
		return fail(StatusResolve, ReasonSA, nil, "%s: the path leaves the subnet at %s, and the SA of subnet %s knows no such port",
			d.Address(), where, prefix)
	}
	msg := st.String()
	if cs := st.ClassSpecific(); cs != 0 {
		msg = ibmad.SAStatusString(cs)
	}
	return fail(StatusResolve, ReasonSA, nil, "%s: the SA of subnet %s (through %s) answered: %s", d.Address(), prefix, where, msg)
}

// remoteNode asks the remote SA for the NodeRecord of lid in its subnet.
func (e *remoteEntry) remoteNode(w *walk, lid uint16) (ibmad.NodeRecord, bool) {
	var nr ibmad.NodeRecord
	if lid == 0 {
		return nr, false
	}
	data, st, err := e.ask(w, ibmad.AttrNodeRecord, ibmad.NRCompLID, wire(&ibmad.NodeRecord{LID: lid}))
	if err != nil || st != 0 {
		return nr, false
	}
	_ = nr.UnmarshalBinary(data)
	return nr, true
}

// prefixString writes a subnet prefix as the first half of a GID.
func prefixString(p uint64) string {
	return fmt.Sprintf("%x:%x:%x:%x::/64", p>>48, p>>32&0xffff, p>>16&0xffff, p&0xffff)
}

// JSONBeyond is the part of a path past the router where it left the
// subnet, in the JSON report (status left_subnet; docs/protocol.md).
type JSONBeyond struct {
	DGID             string `json:"dgid"`
	SubnetPrefix     string `json:"subnet_prefix"`
	RouterGUID       string `json:"router_guid"`
	RouterInPort     uint8  `json:"router_in_port"`
	RouterLID        uint16 `json:"router_lid"` // the router port's LID here (the local SA's DLID)
	SL               uint8  `json:"sl"`
	HopLimit         uint8  `json:"hop_limit"`
	RemoteSA         bool   `json:"remote_sa_answered"`
	RemoteRouterGUID string `json:"remote_router_guid,omitempty"`
	RemoteRouterPort uint8  `json:"remote_router_port,omitempty"` // the router's port in the remote subnet
	RemoteRouterLID  uint16 `json:"remote_router_lid,omitempty"`  // its LID there
	RemoteDLID       uint16 `json:"remote_dlid,omitempty"`        // the destination's LID in the remote subnet
	RemoteSL         uint8  `json:"remote_sl,omitempty"`
	NodeGUID         string `json:"node_guid,omitempty"`
	NodeType         string `json:"node_type,omitempty"`
	NodeDesc         string `json:"node_desc,omitempty"`
	Note             string `json:"note,omitempty"`
}

// json is b's report form (nil for none).
func (b *Beyond) json() *JSONBeyond {
	if b == nil {
		return nil
	}
	j := &JSONBeyond{DGID: b.DGID.String(), SubnetPrefix: prefixString(b.DGID.Prefix()), RouterGUID: b.Router.String(),
		RouterInPort: b.RouterInPort, RouterLID: b.Local.DLID, SL: b.Local.SL, HopLimit: b.Local.HopLimit, Note: b.Note}
	if p2 := b.Remote; p2 != nil {
		j.RemoteSA, j.RemoteRouterLID, j.RemoteDLID, j.RemoteSL = true, p2.DLID, p2.SLID, p2.SL
	}
	if b.RemoteRouter != 0 {
		j.RemoteRouterGUID, j.RemoteRouterPort = b.RemoteRouter.String(), b.RemoteRouterPort
	}
	if b.NodeGUID != 0 {
		j.NodeGUID, j.NodeType, j.NodeDesc = b.NodeGUID.String(), b.NodeType.String(), b.NodeDesc
	}
	return j
}
