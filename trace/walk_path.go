package trace

import (
	"context"
	"errors"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// The directed-route walk (docs/architecture.md, "The life of a trace"):
// from the local node, hop by hop, each switch's LFT entry for the DLID
// names the port to the next node, until the node that owns the DLID.
// The routes of the validation MADs are followed through the same tables
// (routeTo).

func owns(h *Hop, lid uint16) bool {
	return h.LID != 0 && lid >= h.LID && uint32(lid) <= uint32(h.LID)+uint32(1)<<(h.LMC&7)-1
}

func name(h *Hop) string {
	if n := h.shownName(); n != "" { // its node-name-map name once named (NameHops), else its description
		return fmt.Sprintf("%s %q (%s)", h.NodeType, n, h.NodeGUID)
	}
	return fmt.Sprintf("%s %s", h.NodeType, h.NodeGUID)
}

// smpFail classifies a failed SMP of the walk.
func (w *walk) smpFail(err error, format string, a ...any) *Error {
	what := fmt.Sprintf(format, a...)
	switch {
	case errors.Is(err, ibmad.ErrClosed), errors.Is(err, ibmad.ErrDeviceLost), errors.Is(err, ibmad.ErrRequestRefused):
		// Lost, closed, or this request refused by the local kernel
		// (docs/protocol.md, "Send errors"): nothing about the fabric.
		return fail(StatusDevice, ReasonDevice, err, "%s: %v", what, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fail(StatusUnreachable, ReasonTimeout, err, "%s: %v", what, err)
	case errors.Is(err, ibmad.ErrTimeout):
		return fail(StatusUnreachable, ReasonTimeout, err, "%s: no answer: %v", what, err)
	}
	return fail(StatusUnreachable, ReasonNoRoute, err, "%s: %v", what, err)
}

// egressFor returns the port switch h forwards dlid out of.
func (w *walk) egressFor(h *Hop, dlid uint16) (uint8, *Error) {
	top, err := w.switchTop(h.NodeGUID, h.DRPath, false)
	if err != nil {
		return 0, w.smpFail(err, "SwitchInfo of %s", name(h))
	}
	if dlid > top {
		if top, err = w.switchTop(h.NodeGUID, h.DRPath, true); err != nil {
			return 0, w.smpFail(err, "SwitchInfo of %s", name(h))
		}
		if dlid > top {
			return 0, fail(StatusUnreachable, ReasonNoRoute, nil,
				"no route to LID %d: it is above LinearFDBTop %d of %s", dlid, top, name(h))
		}
	}
	b, err := w.lftBlock(h.NodeGUID, h.DRPath, ibmad.LFTBlockOf(dlid))
	if err != nil {
		return 0, w.smpFail(err, "LinearForwardingTable block %d of %s", ibmad.LFTBlockOf(dlid), name(h))
	}
	return forwardPort(h, b, dlid)
}

// forwardPort returns the port block b of switch h forwards dlid out of,
// or why that entry is no route.
func forwardPort(h *Hop, b *ibmad.LFTBlock, dlid uint16) (uint8, *Error) {
	port := b.Port(dlid)
	switch {
	case port == ibmad.LFTNoRoute:
		return 0, fail(StatusUnreachable, ReasonNoRoute, nil, "no route to LID %d: %s has no forwarding entry for it", dlid, name(h))
	case port == 0:
		return 0, fail(StatusUnreachable, ReasonNoRoute, nil,
			"no route to LID %d: %s forwards it to its own port 0 but its LID is %d", dlid, name(h), h.LID)
	case port > h.numPorts:
		return 0, fail(StatusUnreachable, ReasonNoRoute, nil,
			"no route to LID %d: %s forwards it to port %d but has %d ports", dlid, name(h), port, h.numPorts)
	}
	return port, nil
}

// localDown is why a CA's walk cannot leave its local port: the port is
// not Active (nil when it is).
func (w *walk) localDown() *Error {
	if w.src.State != ibmad.PortStateActive {
		return fail(StatusUnreachable, ReasonPortDown, nil, "the local port %s/%d is %s, not Active",
			w.src.CA, w.src.PortNum, w.src.State)
	}
	return nil
}

// revisit marks node ni, met at hop hop, as seen, and is a routing loop
// when it is a switch already on the path (a CA forwards nothing;
// reaching one twice is a port of it).
func (w *walk) revisit(seen map[ibmad.GUID]bool, ni *ibmad.NodeInfo, hop int) *Error {
	if seen[ni.NodeGUID] && ni.NodeType == ibmad.NodeTypeSwitch {
		return fail(StatusUnreachable, ReasonLoop, nil, "routing loop: LID %d comes back to %s %s at hop %d",
			w.dlid, ni.NodeType, ni.NodeGUID, hop)
	}
	seen[ni.NodeGUID] = true
	return nil
}

// arrived reports whether the walk ends at last: it owns w.dlid, or it
// is a CA (which forwards nothing) that does not: then the error.
func (w *walk) arrived(last *Hop) (bool, *Error) {
	if owns(last, w.dlid) {
		return true, nil
	}
	if last.NodeType != ibmad.NodeTypeSwitch {
		return true, fail(StatusUnreachable, ReasonNoRoute, nil,
			"no route to LID %d: the path ends at %s (LID %d), which does not own it", w.dlid, name(last), last.LID)
	}
	return false, nil
}

// walkPath is the directed-route walk (docs/architecture.md, "The life of a trace").
func (w *walk) walkPath() ([]Hop, *Error) {
	if w.viaSA {
		return w.t.sa.walkPath(w)
	}
	ni, rtt, err := w.nodeInfo(ibmad.DRPath{})
	if err != nil {
		return nil, w.smpFail(err, "NodeInfo of the local node")
	}
	desc, err := w.description(ni.NodeGUID, ibmad.DRPath{})
	if err != nil {
		return nil, w.smpFail(err, "NodeDescription of the local node")
	}
	hops := make([]Hop, 1, 8) // most paths: grown once, not three times
	hops[0] = Hop{NodeGUID: ni.NodeGUID, PortGUID: ni.PortGUID, NodeType: ni.NodeType, NodeDesc: desc,
		LID: w.src.LID, LMC: w.src.LMC, DRPath: ibmad.DRPath{}, Agent: AgentSource, RTT: rtt, numPorts: ni.NumPorts}
	if ni.NodeType == ibmad.NodeTypeSwitch {
		hops[0].LMC = 0
	}
	w.remember(ibmad.DRPath{}, nodeID{guid: ni.NodeGUID, inPort: ni.LocalPortNum, isSwitch: ni.NodeType == ibmad.NodeTypeSwitch})
	if owns(&hops[0], w.dlid) {
		return hops, nil
	}
	var egress uint8
	if ni.NodeType == ibmad.NodeTypeSwitch {
		var ferr *Error
		if egress, ferr = w.egressFor(&hops[0], w.dlid); ferr != nil {
			return hops, ferr
		}
	} else {
		if ferr := w.localDown(); ferr != nil {
			return hops, ferr
		}
		egress = w.src.PortNum
		if egress == 0 {
			egress = ni.LocalPortNum
		}
	}
	hops[0].OutPort = egress
	seen := map[ibmad.GUID]bool{ni.NodeGUID: true}
	return w.follow(hops, egress, seen)
}

// follow walks on from the last of hops, which forwards w.dlid out of
// egress, until the node that owns w.dlid; seen holds the nodes already
// on the path.
func (w *walk) follow(hops []Hop, egress uint8, seen map[ibmad.GUID]bool) ([]Hop, *Error) {
	for {
		cur := &hops[len(hops)-1]
		if len(hops) > ibmad.MaxTraceHops {
			return hops, fail(StatusTooLong, ReasonTooLong, nil, "path to LID %d is longer than %d hops", w.dlid, ibmad.MaxTraceHops)
		}
		if len(cur.DRPath) >= ibmad.MaxDRHops {
			return hops, fail(StatusTooLong, ReasonTooLong, nil, "path to LID %d is longer than a directed route can reach (%d hops)",
				w.dlid, ibmad.MaxDRHops)
		}
		path := cur.DRPath.Extend(egress)
		ni, rtt, err := w.nodeInfo(path)
		if err != nil {
			if errors.Is(err, ibmad.ErrTimeout) && cur.NodeType == ibmad.NodeTypeSwitch {
				if pi, perr := w.portInfo(cur.DRPath, egress); perr == nil && pi.PortState != ibmad.PortStateActive {
					return hops, fail(StatusUnreachable, ReasonPortDown, err, "port %d of %s is %s (%s), not Active",
						egress, name(cur), pi.PortState, pi.PortPhysState)
				}
			}
			return hops, w.smpFail(err, "hop %d, behind port %d of %s", len(hops), egress, name(cur))
		}
		isSwitch := ni.NodeType == ibmad.NodeTypeSwitch
		if ferr := w.revisit(seen, &ni, len(hops)); ferr != nil {
			return hops, ferr
		}
		desc, err := w.description(ni.NodeGUID, path)
		if err != nil {
			return hops, w.smpFail(err, "NodeDescription at hop %d", len(hops))
		}
		pi, err := w.hopPortInfo(&ni, path)
		if err != nil {
			return hops, w.smpFail(err, "PortInfo of %s %q", ni.NodeType, desc)
		}
		h := Hop{Hop: len(hops), NodeGUID: ni.NodeGUID, PortGUID: ni.PortGUID, NodeType: ni.NodeType, NodeDesc: desc,
			LID: pi.LID, LMC: pi.LMC, InPort: ni.LocalPortNum, DRPath: path, RTT: rtt, numPorts: ni.NumPorts, lidOwn: true}
		if isSwitch {
			h.LMC = 0
		}
		hops = append(hops, h)
		w.remember(path, nodeID{guid: ni.NodeGUID, inPort: ni.LocalPortNum, isSwitch: isSwitch})
		last := &hops[len(hops)-1]
		if !isSwitch && pi.PortState != ibmad.PortStateActive {
			return hops, fail(StatusUnreachable, ReasonPortDown, nil, "port %d of %s is %s, not Active", last.InPort, name(last), pi.PortState)
		}
		if done, ferr := w.arrived(last); done {
			return hops, ferr
		}
		var ferr *Error
		if egress, ferr = w.egressFor(last, w.dlid); ferr != nil {
			return hops, ferr
		}
		last.OutPort = egress
	}
}

// fromSource walks toward w.dlid from the port whose LID is from (TraceFrom):
// first a walk toward from, as ibtracert reaches its source, then on from
// there. It returns the path from the source (one hop when the source
// owns the DLID) and the walk to the source, whose start the validation
// MADs take.
func (w *walk) fromSource(from uint16) (hops, pre []Hop, ferr *Error) {
	toSrc := newWalk(w.t, w.ctx, w.src, from)
	toSrc.fresh.Store(w.fresh.Load())
	toSrc.viaSA, w.viaSA = false, false // a trace from another port walks with SMPs
	pre, ferr = toSrc.walkPath()
	w.snd.mads.Add(toSrc.snd.mads.Load())
	w.shared.Add(toSrc.shared.Load())
	if ferr != nil {
		ferr.Msg = fmt.Sprintf("the source, LID %d: %s", from, ferr.Msg)
		return nil, pre, ferr
	}
	dlid := w.dlid
	s := pre[len(pre)-1]
	h0 := Hop{NodeGUID: s.NodeGUID, PortGUID: s.PortGUID, NodeType: s.NodeType, NodeDesc: s.NodeDesc, LID: s.LID, LMC: s.LMC,
		DRPath: s.DRPath, Agent: AgentSource, RTT: s.RTT, numPorts: s.numPorts}
	hops = []Hop{h0}
	if owns(&hops[0], dlid) {
		return hops, pre, nil
	}
	seen := map[ibmad.GUID]bool{s.NodeGUID: true}
	var egress uint8
	if s.NodeType == ibmad.NodeTypeSwitch {
		if egress, ferr = w.egressFor(&hops[0], dlid); ferr != nil {
			return hops, pre, ferr
		}
		hops[0].OutPort = egress
	} else {
		// A CA or router: out of the port the walk reached it by, to the
		// node one hop back along that directed route.
		if len(pre) < 2 {
			return hops, pre, fail(StatusUnreachable, ReasonNoRoute, nil, "the source LID %d is on the local node but not its port", from)
		}
		hops[0].OutPort = s.InPort
		p := pre[len(pre)-2]
		nb := Hop{Hop: 1, NodeGUID: p.NodeGUID, PortGUID: p.PortGUID, NodeType: p.NodeType, NodeDesc: p.NodeDesc,
			LID: p.LID, LMC: p.LMC, InPort: s.DRPath[len(s.DRPath)-1], DRPath: p.DRPath, RTT: p.RTT, numPorts: p.numPorts}
		hops = append(hops, nb)
		seen[nb.NodeGUID] = true
		last := &hops[1]
		if !owns(last, dlid) {
			if last.NodeType != ibmad.NodeTypeSwitch {
				return hops, pre, fail(StatusUnreachable, ReasonNoRoute, nil,
					"no route to LID %d: the path ends at %s (LID %d), which does not own it", dlid, name(last), last.LID)
			}
			if egress, ferr = w.egressFor(last, dlid); ferr != nil {
				return hops, pre, ferr
			}
			last.OutPort = egress
		}
	}
	if !owns(&hops[len(hops)-1], dlid) {
		hops, ferr = w.follow(hops, egress, seen)
	}
	return hops, pre, ferr
}

// ownsLocal says whether lid is one of the local port's (src's) LIDs.
func ownsLocal(src ibmad.PortAttributes, lid uint16) bool {
	local := Hop{LID: src.LID, LMC: src.LMC}
	if src.NodeType == ibmad.NodeTypeSwitch {
		local.LMC = 0
	}
	return owns(&local, lid)
}

// isOrigin says whether h is the local node of a trace from another
// source (TraceFrom), on that trace's path: the node validation MADs
// leave from.
func (w *walk) isOrigin(h *Hop) bool {
	return w.origin != nil && h.NodeGUID == w.origin[0].NodeGUID
}

// routeTo follows the forwarding tables from the source toward target, the
// LID of hop i, and returns the number of links to it and the expected
// ingress port at each (docs/protocol.md, "The expected ingress ports"): in a fat tree the route to a
// switch's own LID need not be a prefix of the route to the DLID. It also
// sets hop i's ExpectedFrom and ExpectedFromPort: the node and port the
// route's last link leaves from.
func (w *walk) routeTo(hops []Hop, i int, target uint16) (int, []uint8, error) {
	want := hops[i].NodeGUID
	var cur nodeID
	var in []uint8
	var from ibmad.GUID
	var fromPort uint8
	start := hops
	if w.origin != nil { // a trace from another source (TraceFrom): the MADs leave from here
		start = w.origin
	}
	if start[0].NodeType == ibmad.NodeTypeSwitch {
		cur = nodeID{guid: start[0].NodeGUID, isSwitch: true, path: ibmad.DRPath{}}
	} else {
		cur = nodeID{guid: start[1].NodeGUID, inPort: start[1].InPort, isSwitch: start[1].NodeType == ibmad.NodeTypeSwitch, path: start[1].DRPath}
		in = append(in, start[1].InPort)
		from, fromPort = start[0].NodeGUID, start[0].OutPort
	}
	for {
		if cur.guid == want {
			hops[i].ExpectedFrom, hops[i].ExpectedFromPort = from, fromPort
			return len(in), in, nil
		}
		if !cur.isSwitch {
			return 0, nil, fmt.Errorf("the LID route to %d ends at CA %s", target, cur.guid)
		}
		if len(in) >= ibmad.MaxTraceHops || len(cur.path) >= ibmad.MaxDRHops {
			return 0, nil, fmt.Errorf("the LID route to %d is longer than %d hops", target, ibmad.MaxTraceHops)
		}
		b, err := w.lftBlock(cur.guid, cur.path, ibmad.LFTBlockOf(target))
		if err != nil {
			return 0, nil, err
		}
		port := b.Port(target)
		if port == 0 || port == ibmad.LFTNoRoute {
			return 0, nil, fmt.Errorf("switch %s has no forwarding entry for LID %d", cur.guid, target)
		}
		next, err := w.nodeAtPath(cur.path.Extend(port))
		if err != nil {
			return 0, nil, err
		}
		in = append(in, next.inPort)
		from, fromPort = cur.guid, port
		cur = next
	}
}
