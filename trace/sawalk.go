package trace

import (
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// saWalkPath is walkPath without SMPs (docs/architecture.md, "SA-only
// discovery"): the SA's records stand for what the directed-route walk
// reads. NodeRecord by LID for NodeInfo and the description,
// LinkRecord by (LID, port) for the node behind a port, PortInfoRecord
// for a CA port's LMC and state, LinearForwardingTableRecord by (switch
// LID, block) for the egress port. The DR paths of the hops are kept as
// the walk's bookkeeping (validate.go keys nodes by them); none is sent.
func (w *walk) saWalkPath() ([]Hop, *Error) {
	me, err := w.saNodeAt(w.src.LID)
	if err != nil {
		return nil, w.saWalkFail(err, "the local node (LID %d)", w.src.LID)
	}
	isSwitch := me.ni.NodeType == ibmad.NodeTypeSwitch
	hops := []Hop{{NodeGUID: me.ni.NodeGUID, PortGUID: me.ni.PortGUID, NodeType: me.ni.NodeType, NodeDesc: me.desc,
		LID: w.src.LID, LMC: w.src.LMC, DRPath: ibmad.DRPath{}, Agent: AgentSource, numPorts: me.ni.NumPorts}}
	if isSwitch {
		hops[0].LMC = 0
	}
	w.remember(ibmad.DRPath{}, nodeID{guid: me.ni.NodeGUID, inPort: w.src.PortNum, isSwitch: isSwitch, lid: w.src.LID})
	if owns(&hops[0], w.dlid) {
		return hops, nil
	}
	var egress uint8
	if isSwitch {
		var ferr *Error
		if egress, ferr = w.saEgress(&hops[0]); ferr != nil {
			return hops, ferr
		}
	} else {
		if ferr := w.localDown(); ferr != nil {
			return hops, ferr
		}
		egress = w.src.PortNum
	}
	hops[0].OutPort = egress
	seen := map[ibmad.GUID]bool{me.ni.NodeGUID: true}
	for {
		cur := &hops[len(hops)-1]
		if len(hops) > ibmad.MaxTraceHops {
			return hops, fail(StatusTooLong, ReasonTooLong, nil, "path to LID %d is longer than %d hops", w.dlid, ibmad.MaxTraceHops)
		}
		link, err := w.saLinkFrom(cur.LID, egress)
		if err != nil {
			return hops, w.saWalkFail(err, "hop %d, behind port %d of %s", len(hops), egress, name(cur))
		}
		n, err := w.saNodeAt(link.toLID)
		if err != nil {
			return hops, w.saWalkFail(err, "hop %d, behind port %d of %s", len(hops), egress, name(cur))
		}
		isSwitch := n.ni.NodeType == ibmad.NodeTypeSwitch
		if ferr := w.revisit(seen, &n.ni, len(hops)); ferr != nil {
			return hops, ferr
		}
		path := cur.DRPath.Extend(egress)
		h := Hop{Hop: len(hops), NodeGUID: n.ni.NodeGUID, PortGUID: n.ni.PortGUID, NodeType: n.ni.NodeType, NodeDesc: n.desc,
			LID: link.toLID, InPort: link.toPort, DRPath: path, numPorts: n.ni.NumPorts}
		if !isSwitch {
			pi, err := w.saPortInfo(link.toLID, link.toPort)
			if err != nil {
				return append(hops, h), w.saWalkFail(err, "%s", name(&h))
			}
			h.LID, h.LMC = pi.lid, pi.lmc
			if pi.state != ibmad.PortStateActive {
				return append(hops, h), fail(StatusUnreachable, ReasonPortDown, nil, "port %d of %s is %s, not Active", h.InPort, name(&h), pi.state)
			}
		}
		hops = append(hops, h)
		w.remember(path, nodeID{guid: h.NodeGUID, inPort: h.InPort, isSwitch: isSwitch, lid: h.LID})
		last := &hops[len(hops)-1]
		if done, ferr := w.arrived(last); done {
			return hops, ferr
		}
		var ferr *Error
		if egress, ferr = w.saEgress(last); ferr != nil {
			return hops, ferr
		}
		last.OutPort = egress
	}
}

// saEgress is egressFor from the switch's LinearForwardingTableRecord.
// Without SwitchInfo there is no LinearFDBTop: a block the SA has no
// record of is a LID the switch does not route.
func (w *walk) saEgress(h *Hop) (uint8, *Error) {
	dlid := w.dlid
	b, err := w.lftBlock(h.NodeGUID, h.DRPath, ibmad.LFTBlockOf(dlid))
	if err != nil {
		return 0, w.saWalkFail(err, "no route to LID %d at %s", dlid, name(h))
	}
	return forwardPort(h, b, dlid)
}

// saLIDOf returns the LID the walk knows node guid by.
func (w *walk) saLIDOf(guid ibmad.GUID) (uint16, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, n := range w.nodeAt {
		if n.guid == guid && n.lid != 0 {
			return n.lid, nil
		}
	}
	return 0, fmt.Errorf("the walk knows no LID of %s", guid)
}

// saNodeAtPath is nodeAtPath from the SA: the node behind the last port
// of path, from the LinkRecord of the node path's prefix leads to.
func (w *walk) saNodeAtPath(path ibmad.DRPath) (nodeID, error) {
	if len(path) == 0 {
		return nodeID{}, fmt.Errorf("no node before the local one")
	}
	w.mu.Lock()
	parent, ok := w.nodeAt[string(path[:len(path)-1])]
	w.mu.Unlock()
	if !ok || parent.lid == 0 {
		return nodeID{}, fmt.Errorf("the walk knows no node at %s", path[:len(path)-1])
	}
	link, err := w.saLinkFrom(parent.lid, path[len(path)-1])
	if err != nil {
		return nodeID{}, err
	}
	n, err := w.saNodeAt(link.toLID)
	if err != nil {
		return nodeID{}, err
	}
	id := nodeID{guid: n.ni.NodeGUID, inPort: link.toPort, isSwitch: n.ni.NodeType == ibmad.NodeTypeSwitch, lid: link.toLID, path: path}
	w.remember(path, id)
	return id, nil
}
