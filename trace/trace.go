package trace

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Trace traces one destination. It never returns an error: failures are
// in the Result, classified by Status and Reason.
func (t *Tracer) Trace(ctx context.Context, d Destination) *Result {
	r := &Result{Destination: d, Start: time.Now()}
	w := t.newWalk(ctx, ibmad.PortAttributes{}, 0)
	defer func() {
		r.MADs = int(w.mads.Load())
		r.Duration = time.Since(r.Start)
	}()
	finish := func(e *Error) *Result {
		r.Status, r.Reason, r.Err = e.Status, e.Reason, e
		return r
	}
	if err := d.Validate(); err != nil {
		return finish(fail(StatusResolve, ReasonBadConfig, err, "%s: %v", d, err))
	}
	src, err := t.e.Port()
	if err != nil {
		return finish(fail(StatusDevice, ReasonDevice, err, "local port: %v", err))
	}
	w.src = src
	if src.LID == 0 && src.NodeType != ibmad.NodeTypeSwitch {
		return finish(fail(StatusDevice, ReasonDevice, nil,
			"the local port %s/%d has no LID yet (state %s): is a subnet manager running?", src.CA, src.PortNum, src.State))
	}
	dlid, port, ferr := t.resolve(w, d)
	if ferr != nil {
		return finish(ferr)
	}
	w.dlid, r.DLID, r.Port = dlid, dlid, port

	if !t.opts.NoFastPath && !t.opts.NoValidate {
		if hops, ok := t.confirm(w); ok {
			r.Hops, r.Status, r.FastPath = hops, StatusOK, true
			return r
		}
	}
	hops, inPorts, ferr := t.fullTrace(w)
	r.Hops = hops
	if ferr != nil {
		t.forget(dlid, d)
		return finish(ferr)
	}
	if r.Count(AgentMismatch) > 0 {
		// Status 7 must mean the data plane did not follow the tables: make
		// sure the tables did not just change under us (an SM sweep) by
		// reading them again before reporting.
		w2 := t.newWalk(ctx, src, dlid)
		hops2, inPorts2, ferr2 := t.fullTrace(w2)
		w.mads.Add(w2.mads.Load())
		if ferr2 != nil {
			r.Hops = hops2
			t.forget(dlid, d)
			return finish(ferr2)
		}
		r.Hops, inPorts = hops2, inPorts2
	}
	if n := r.Count(AgentMismatch); n > 0 {
		t.forget(dlid, d)
		return finish(fail(StatusMismatch, ReasonMismatch, nil, "%d hop(s) received the trace on a port the forwarding tables do not predict (status 7)", n))
	}
	r.Status = StatusOK
	if !t.opts.NoValidate && r.Count(AgentLost) == 0 {
		t.mu.Lock()
		t.paths[dlid] = &cachedPath{hops: append([]Hop(nil), r.Hops...), inPorts: inPorts, srcLID: src.LID}
		t.mu.Unlock()
	}
	return r
}

func (t *Tracer) fullTrace(w *walk) ([]Hop, [][]uint8, *Error) {
	hops, ferr := w.walkPath()
	if ferr != nil {
		return hops, nil, ferr
	}
	if t.opts.NoValidate {
		for i := 1; i < len(hops); i++ {
			hops[i].Agent = AgentUnsupported
		}
		return hops, nil, nil
	}
	return hops, w.validate(hops), nil
}

// forget drops what a failed trace must not reuse.
func (t *Tracer) forget(dlid uint16, d Destination) {
	t.mu.Lock()
	delete(t.paths, dlid)
	delete(t.resolved, d)
	clear(t.verdicts) // something changed: ask the agents and switches again
	clear(t.blocks)
	t.mu.Unlock()
}

// confirm re-checks a cached path with one MAD per hop, all at once: the
// LFT entry for the DLID at every switch, SourceRoute at every agent, and
// NodeInfo at a destination without one. Any difference, or an agent
// support entry that expired (a new agent may have started), means walk.
func (t *Tracer) confirm(w *walk) ([]Hop, bool) {
	t.mu.Lock()
	cp := t.paths[w.dlid]
	if cp == nil || cp.srcLID != w.src.LID {
		t.mu.Unlock()
		return nil, false
	}
	now := time.Now()
	for _, h := range cp.hops[1:] {
		if s, ok := t.support[h.NodeGUID]; !ok || now.After(s.expires) {
			t.mu.Unlock()
			return nil, false
		}
	}
	hops := append([]Hop(nil), cp.hops...)
	t.mu.Unlock()

	var mu sync.Mutex
	ok := true
	bad := func() { mu.Lock(); ok = false; mu.Unlock() }
	var wg sync.WaitGroup
	last := len(hops) - 1
	for i := range hops {
		h := &hops[i]
		if h.NodeType == ibmad.NodeTypeSwitch && h.OutPort != 0 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b, err := w.sharedBlock(h.NodeGUID, h.DRPath, ibmad.LFTBlockOf(w.dlid))
				if err != nil || b.Port(w.dlid) != h.OutPort {
					bad()
				}
			}()
		}
		if i == 0 {
			continue
		}
		switch {
		case h.Agent == AgentValidated || h.Agent == AgentIngressUnknown:
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				target := h.LID
				if i == last {
					target = w.dlid
				}
				in := cp.inPorts[i]
				w.sourceRoute(h, target, len(in), in, false)
				if h.Agent != AgentValidated && h.Agent != AgentIngressUnknown {
					bad()
				}
			}(i)
		case i == last:
			wg.Add(1)
			go func() {
				defer wg.Done()
				ni, rtt, err := w.nodeInfo(h.DRPath)
				if err != nil || ni.NodeGUID != h.NodeGUID {
					bad()
					return
				}
				h.RTT = rtt
			}()
		}
	}
	wg.Wait()
	return hops, ok
}

// resolve turns a destination into a DLID, through the SA for GIDs, GUIDs
// and node names; for a node it also returns the port it chose.
func (t *Tracer) resolve(w *walk, d Destination) (uint16, uint8, *Error) {
	if d.LID != 0 {
		return d.LID, 0, nil
	}
	t.mu.Lock()
	if e, ok := t.resolved[d]; ok && time.Now().Before(e.expires) {
		t.mu.Unlock()
		return e.dlid, e.port, nil
	}
	t.mu.Unlock()
	if w.src.SMLID == 0 {
		return 0, 0, fail(StatusResolve, ReasonSA, nil, "cannot resolve %s: the local port knows no SM LID (is a subnet manager running?)", d.Address())
	}
	var dlid uint16
	var port uint8
	var ferr *Error
	switch d.Kind() {
	case "gid", "guid":
		dgid := d.GID
		if d.Kind() == "guid" {
			prefix := w.src.GIDPrefix
			if prefix == 0 {
				prefix = ibmad.DefaultGIDPrefix
			}
			dgid = ibmad.MakeGID(prefix, d.GUID)
		}
		dlid, ferr = w.pathRecord(d, dgid)
	case "node":
		dlid, port, ferr = w.nodeRecord(d)
	}
	if ferr != nil {
		return 0, 0, ferr
	}
	if t.opts.ResolveTTL > 0 {
		t.mu.Lock()
		t.resolved[d] = resolvedEntry{dlid: dlid, port: port, expires: time.Now().Add(t.opts.ResolveTTL)}
		t.mu.Unlock()
	}
	return dlid, port, nil
}

// saGet resolves d with one SA Get; a transport error or a non-zero
// status becomes the trace's failure.
func (w *walk) saGet(d Destination, what string, attr ibmad.AttrID, mask uint64, fill func([]byte)) (*ibmad.MAD, *Error) {
	resp, err := w.sa(attr, mask, fill)
	if err != nil {
		return nil, w.saFail(d, what, err, 0)
	}
	if st := resp.MAD.Status(); st != 0 {
		return nil, w.saFail(d, what, nil, st)
	}
	return &resp.MAD, nil
}

func (w *walk) sa(attr ibmad.AttrID, mask uint64, fill func([]byte)) (*ibmad.Response, error) {
	q := ibmad.NewSAGet(attr, mask)
	fill(q.Data[:])
	req := &ibmad.Request{Addr: ibmad.GSIAddress(w.src.SMLID, w.src.SMSL)}
	_ = q.MarshalTo(req.MAD[:])
	return w.do(req)
}

func (w *walk) saFail(d Destination, what string, err error, st ibmad.Status) *Error {
	if err != nil {
		if errors.Is(err, ibmad.ErrClosed) || errors.Is(err, ibmad.ErrDeviceLost) {
			return fail(StatusDevice, ReasonDevice, err, "resolving %s: %v", d.Address(), err)
		}
		return fail(StatusResolve, ReasonSA, err, "resolving %s: SA %s at LID %d: %v", d.Address(), what, w.src.SMLID, err)
	}
	msg := st.String()
	if cs := st.ClassSpecific(); cs != 0 {
		msg = ibmad.SAStatusString(cs)
	}
	switch st.ClassSpecific() {
	case ibmad.SAStatusNoRecords:
		return fail(StatusResolve, ReasonSA, nil, "resolving %s: the SA knows no such port (%s: %s)", d.Address(), what, msg)
	case ibmad.SAStatusTooManyRecords:
		return fail(StatusResolve, ReasonSA, nil, "resolving %s: it matches several ports; trace one of them by GUID or LID", d.Address())
	}
	return fail(StatusResolve, ReasonSA, nil, "resolving %s: SA %s failed: %s", d.Address(), what, msg)
}

func (w *walk) pathRecord(d Destination, dgid ibmad.GID) (uint16, *Error) {
	m, ferr := w.saGet(d, "PathRecord", ibmad.AttrPathRecord, ibmad.PRCompDGID|ibmad.PRCompSGID, func(b []byte) {
		pr := ibmad.PathRecord{DGID: dgid, SGID: w.src.GID()}
		_ = pr.MarshalTo(b)
	})
	if ferr != nil {
		return 0, ferr
	}
	var pr ibmad.PathRecord
	_ = pr.UnmarshalBinary(m.SAData())
	if pr.DLID == 0 {
		return 0, fail(StatusResolve, ReasonSA, nil, "resolving %s: the SA answered DLID 0", d.Address())
	}
	return pr.DLID, nil
}

// nodeRecord resolves a node description with SA NodeRecord Gets. A Get
// matches one record per CA port (one per switch), so: the port d names,
// by description and LocalPortNum; otherwise the description alone, and
// if that matches several records, port 1, 2, ... until the SA knows one
// (OpenSM keeps records of the ports it has discovered only).
func (w *walk) nodeRecord(d Destination) (uint16, uint8, *Error) {
	if len(d.Node) > ibmad.NodeDescriptionSize {
		return 0, 0, fail(StatusResolve, ReasonBadConfig, nil, "node description %q is longer than 64 bytes", d.Node)
	}
	get := func(port uint8) (*ibmad.MAD, error) {
		mask := ibmad.NRCompNodeDesc
		if port != 0 {
			mask |= ibmad.NRCompLocalPortNum
		}
		resp, err := w.sa(ibmad.AttrNodeRecord, mask, func(b []byte) {
			nr := ibmad.NodeRecord{NodeDescription: ibmad.NewNodeDescription(d.Node)}
			nr.NodeInfo.LocalPortNum = port
			_ = nr.MarshalTo(b)
		})
		if err != nil {
			return nil, err
		}
		return &resp.MAD, nil
	}
	found := func(m *ibmad.MAD) (uint16, uint8, *Error) {
		var nr ibmad.NodeRecord
		_ = nr.UnmarshalBinary(m.SAData())
		if nr.LID == 0 {
			return 0, 0, fail(StatusResolve, ReasonSA, nil, "resolving %s: the SA answered LID 0", d.Address())
		}
		return nr.LID, nr.NodeInfo.LocalPortNum, nil
	}
	several := func() *Error {
		return fail(StatusResolve, ReasonSA, nil, "resolving %s: several nodes have this description; trace one of them by GUID or LID", d.Address())
	}
	m, err := get(d.Port)
	if err != nil {
		return 0, 0, w.saFail(d, "NodeRecord", err, 0)
	}
	switch st := m.Status(); {
	case st == 0:
		return found(m)
	case st.ClassSpecific() == ibmad.SAStatusNoRecords && d.Port != 0:
		return 0, 0, fail(StatusResolve, ReasonSA, nil, "resolving %s: the SA knows no port %d of that node (no such node or port, or the port is down)", d.Address(), d.Port)
	case st.ClassSpecific() == ibmad.SAStatusTooManyRecords && d.Port != 0:
		return 0, 0, several()
	case st.ClassSpecific() != ibmad.SAStatusTooManyRecords:
		return 0, 0, w.saFail(d, "NodeRecord", nil, st)
	}
	// Several records: the node has several ports (or several nodes share
	// the description). Its first port the SA knows.
	for port := 1; port <= 254; port++ {
		m, err := get(uint8(port))
		if err != nil {
			return 0, 0, w.saFail(d, "NodeRecord", err, 0)
		}
		switch st := m.Status(); {
		case st == 0:
			return found(m)
		case st.ClassSpecific() == ibmad.SAStatusTooManyRecords:
			return 0, 0, several()
		case st.ClassSpecific() != ibmad.SAStatusNoRecords:
			return 0, 0, w.saFail(d, "NodeRecord", nil, st)
		}
	}
	return 0, 0, fail(StatusResolve, ReasonSA, nil, "resolving %s: the SA matched several records but none by port number", d.Address())
}

// saConcurrency bounds the SA queries one tracer has in flight.
const saConcurrency = 4

// AllCAPorts lists the base LID of every CA port the SA knows: one
// NodeRecord Get per LID up to the local leaf switch's LinearFDBTop, all
// at once (a GetTable would need RMPP).
func (t *Tracer) AllCAPorts(ctx context.Context) ([]Destination, error) {
	src, err := t.e.Port()
	if err != nil {
		return nil, err
	}
	w := t.newWalk(ctx, src, 0)
	path := ibmad.DRPath{}
	if src.NodeType != ibmad.NodeTypeSwitch {
		path = ibmad.DRPath{src.PortNum}
	}
	ni, _, err := w.nodeInfo(path)
	if err != nil {
		return nil, fmt.Errorf("the local leaf switch: %w", err)
	}
	top, err := w.switchTop(ni.NodeGUID, path, true)
	if err != nil {
		return nil, fmt.Errorf("SwitchInfo of the local leaf switch: %w", err)
	}
	if src.SMLID == 0 {
		return nil, errors.New("the local port knows no SM LID (is a subnet manager running?)")
	}
	out := make([]Destination, int(top)+1)
	var answered atomic.Int32
	// Gently: the SA is one process serving the whole subnet (OpenSM under
	// ibsim was seen to die under 64 queries at once).
	sem := make(chan struct{}, saConcurrency)
	var wg sync.WaitGroup
	for lid := 1; lid <= int(top); lid++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(lid uint16) {
			defer wg.Done()
			defer func() { <-sem }()
			resp, err := w.sa(ibmad.AttrNodeRecord, ibmad.NRCompLID, func(b []byte) {
				nr := ibmad.NodeRecord{LID: lid}
				_ = nr.MarshalTo(b)
			})
			if err != nil {
				return
			}
			answered.Add(1) // NoRecords for an unused LID is an answer too
			if resp.MAD.Status() != 0 {
				return
			}
			var nr ibmad.NodeRecord
			_ = nr.UnmarshalBinary(resp.MAD.SAData())
			if nr.NodeInfo.NodeType == ibmad.NodeTypeCA && nr.LID == lid {
				out[lid] = Destination{LID: lid, Name: nr.NodeDescription.String()}
			}
		}(uint16(lid))
	}
	wg.Wait()
	if answered.Load() == 0 {
		return nil, fmt.Errorf("the SA at LID %d answered none of %d NodeRecord queries", src.SMLID, top)
	}
	var ds []Destination
	for _, d := range out {
		if d.LID != 0 {
			ds = append(ds, d)
		}
	}
	return ds, nil
}
