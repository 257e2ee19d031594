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
func (w *walk) routerPath(d Destination, dgid ibmad.GID) (uint16, *remoteEntry, *Error) {
	m, ferr := w.saGet(d, "PathRecord", ibmad.AttrPathRecord, ibmad.PRCompDGID|ibmad.PRCompSGID, func(b []byte) {
		pr := ibmad.PathRecord{DGID: dgid, SGID: w.src.GID()}
		_ = pr.MarshalTo(b)
	})
	if ferr != nil {
		if ferr.Reason == ReasonSA && ferr.Err == nil {
			ferr.Msg += fmt.Sprintf(" (GID prefix %s is not this subnet's: does the SA know a router to it?)", prefixString(dgid.Prefix()))
		}
		return 0, nil, ferr
	}
	var pr ibmad.PathRecord
	_ = pr.UnmarshalBinary(m.SAData())
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

// remoteSA sends one SA Get to the remote subnet's SA through the router.
func (w *walk) remoteSA(p1 ibmad.PathRecord, attr ibmad.AttrID, mask uint64, fill func([]byte)) (*ibmad.Response, error) {
	q := ibmad.NewSAGet(attr, mask)
	fill(q.Data[:])
	req := &ibmad.Request{Addr: remoteSAAddress(p1, w.src)}
	_ = q.MarshalTo(req.MAD[:])
	return w.do(req)
}

// beyond finishes a trace to a GID of another subnet whose walk reached
// a router: the status becomes left_subnet, and the remote SA is asked
// where the router forwards to the destination (the reverse path, P2),
// then who the two ends are. A router that passes nothing on makes the
// trace fail with reason router_not_forwarding, the local hops kept. A
// walk that ended at a port of this subnet is left alone (reached.go
// checks it is the port the GID names).
func (t *Tracer) beyond(w *walk, r *Result) {
	e := w.remote
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
	resp, err := w.remoteSA(e.p1, ibmad.AttrPathRecord, ibmad.PRCompDGID|ibmad.PRCompSGID, func(buf []byte) {
		pr := ibmad.PathRecord{SGID: e.p1.DGID, DGID: w.src.GID()}
		_ = pr.MarshalTo(buf)
	})
	if ferr := remoteFail(r.Destination, where, e.p1.DGID, err, resp); ferr != nil {
		b.Note = ferr.Msg
		r.Status, r.Reason, r.Err = ferr.Status, ferr.Reason, ferr
		return
	}
	var p2 ibmad.PathRecord
	_ = p2.UnmarshalBinary(resp.MAD.SAData())
	b.Remote = &p2
	var notes []string
	if rt, ok := w.remoteNode(e.p1, p2.DLID); ok {
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
	if dst, ok := w.remoteNode(e.p1, p2.SLID); ok {
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

// remoteFail classifies the remote SA's PathRecord answer (nil: a record).
func remoteFail(d Destination, where string, dgid ibmad.GID, err error, resp *ibmad.Response) *Error {
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
	st := resp.MAD.Status()
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
func (w *walk) remoteNode(p1 ibmad.PathRecord, lid uint16) (ibmad.NodeRecord, bool) {
	var nr ibmad.NodeRecord
	if lid == 0 {
		return nr, false
	}
	resp, err := w.remoteSA(p1, ibmad.AttrNodeRecord, ibmad.NRCompLID, func(b []byte) {
		_ = (&ibmad.NodeRecord{LID: lid}).MarshalTo(b)
	})
	if err != nil || resp.MAD.Status() != 0 {
		return nr, false
	}
	_ = nr.UnmarshalBinary(resp.MAD.SAData())
	return nr, true
}

// prefixString writes a subnet prefix as the first half of a GID.
func prefixString(p uint64) string {
	return fmt.Sprintf("%x:%x:%x:%x::/64", p>>48, p>>32&0xffff, p>>16&0xffff, p&0xffff)
}

// Succeeded says whether s is a success: ok, or left_subnet (the path
// left the subnet at a router whose far side answered). Exit statuses,
// trace_success and the alerts count both as one.
func (s Status) Succeeded() bool { return s == StatusOK || s == StatusLeftSubnet }

// Walked says whether a trace of status s walked its whole path in this
// subnet, so that its hops are the path: a success or a port mismatch.
func (s Status) Walked() bool { return s.Succeeded() || s == StatusMismatch }
