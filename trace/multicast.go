package trace

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// MulticastNote is the validation note of every multicast trace: the
// vendor agent and the SMA answer MADs, and a MAD is unicast (LID-routed
// by the LFTs, never by the MFTs), so no answer could tell whether the
// multicast tables carry the group's packets along the path
// (docs/architecture.md, "Multicast traces").
const MulticastNote = "agents cannot validate a multicast path: validation MADs are unicast and follow the LFTs, not the MFTs; no validation MAD was sent"

// TraceMulticast traces the path the multicast forwarding tables give
// MLID mlid from the port whose LID is from (0: the local port) to the
// port that owns dlid, as `ibtracert -m MLID SRC DST` does: a breadth-first
// directed-route walk from the source over the ports each switch's MFT
// entry for mlid selects (docs/architecture.md, "Multicast traces"). No
// hop is validated: see MulticastNote.
func (t *Tracer) TraceMulticast(ctx context.Context, mlid, from, dlid uint16) *Result {
	r := &Result{Destination: Destination{LID: dlid}, DLID: dlid, From: from, MLID: mlid, Start: time.Now(),
		Discovery: DiscoverySMP, ValidationNote: MulticastNote}
	w := t.newWalk(ctx, ibmad.PortAttributes{}, dlid)
	w.viaSA = false // the SA has no MFT records this walk could use
	w.fresh.Store(true)
	hops, ferr := w.multicastPath(mlid, from)
	r.Hops = hops
	for i := range r.Hops {
		if i > 0 {
			r.Hops[i].Agent = AgentNotAsked
		}
	}
	r.MADs, r.SharedFacts = int(w.mads.Load()), int(w.shared.Load())
	r.Duration = time.Since(r.Start)
	if ferr != nil {
		r.Status, r.Reason, r.Err = ferr.Status, ferr.Reason, ferr
		notAsked(r.Hops)
		return r
	}
	r.Status = StatusOK
	return r
}

// mcNode is a node the multicast walk reached: its hop, the node it was
// reached from (-1 at the source), the port of that node it left by
// (via) and its own port it entered by (up).
type mcNode struct {
	hop     Hop
	parent  int
	via, up uint8
	mft     []uint8 // a switch's MFT ports for the MLID, once read
	// skipped says, for a port of mft the walk did not go on through,
	// why (multicast_explain.go).
	skipped map[uint8]skip
	// entered is, at the source, its LocalPortNum as our directed route
	// reads it: ibtracert -m prints it on the From line.
	entered uint8
}

// mcWalk is the state of one multicast walk.
type mcWalk struct {
	w        *walk
	mlid     uint16
	nodes    []mcNode
	seen     map[ibmad.GUID]bool
	deadEnds []string
	cuts     []string // the switches with a branch of their MFT entry cut (multicast_explain.go)
	firstEnd int      // the first node the walk could not go on from; -1: none
}

func (w *walk) multicastPath(mlid, from uint16) ([]Hop, *Error) {
	if mlid < ibmad.MLIDBase || mlid > ibmad.MLIDMax {
		return nil, fail(StatusResolve, ReasonBadConfig, nil, "MLID 0x%04x is not a multicast LID (0xC000..0xFFFE)", mlid)
	}
	if w.dlid == 0 || w.dlid >= ibmad.MLIDBase {
		return nil, fail(StatusResolve, ReasonBadConfig, nil, "destination LID %d is not a unicast LID (1..49151)", w.dlid)
	}
	if from >= ibmad.MLIDBase {
		return nil, fail(StatusResolve, ReasonBadConfig, nil, "source LID %d is not a unicast LID (1..49151)", from)
	}
	src, err := w.t.e.Port()
	if err != nil {
		return nil, fail(StatusDevice, ReasonDevice, err, "local port: %v", err)
	}
	w.src = src
	m := &mcWalk{w: w, mlid: mlid, seen: map[ibmad.GUID]bool{}, firstEnd: -1}
	start, found, ferr := m.root(from)
	if ferr != nil {
		return m.chain(len(m.nodes) - 1), ferr
	}
	if found < 0 {
		found = m.search(start)
	}
	if found >= 0 {
		return m.chain(found), nil
	}
	if at, why := m.explain(); at >= 0 {
		return m.chain(at), why
	}
	end := m.firstEnd
	if end < 0 {
		end = 0
	}
	return m.chain(end), m.noRoute()
}

// noRoute is why the walk did not reach the destination: the switches it
// could not go on from.
func (m *mcWalk) noRoute() *Error {
	why := "the multicast forwarding tables lead nowhere from the source"
	if n := len(m.deadEnds); n > 0 {
		shown := m.deadEnds[:min(n, 4)]
		why = strings.Join(shown, "; ")
		if n > len(shown) {
			why += fmt.Sprintf("; and %d more", n-len(shown))
		}
	}
	return fail(StatusUnreachable, ReasonNoRoute, nil, "no multicast route for MLID 0x%04x from LID %d to LID %d: %s",
		m.mlid, m.nodes[0].hop.LID, m.w.dlid, why)
}

// chain returns the path from the source to node i: each hop enters by
// the port it was reached through and leaves by its successor's via.
func (m *mcWalk) chain(i int) []Hop {
	var idx []int
	for ; i >= 0; i = m.nodes[i].parent {
		idx = append(idx, i)
	}
	hops := make([]Hop, len(idx))
	for k := range idx {
		n := &m.nodes[idx[len(idx)-1-k]]
		hops[k] = n.hop
		hops[k].Hop, hops[k].InPort, hops[k].OutPort = k, n.up, 0
		if k > 0 {
			hops[k-1].OutPort = n.via
		} else {
			hops[k].InPort = n.entered
		}
	}
	return hops
}
