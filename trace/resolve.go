package trace

import (
	"errors"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// resolve turns a destination into a DLID, through the SA for GIDs, GUIDs
// and node names; for a node it also returns the port it chose. The
// entry names the port the destination is (reached.go); cached says it
// came from the cache, kept for Options.ResolveTTL (none when negative).
func (t *Tracer) resolve(w *walk, d Destination) (e resolvedEntry, cached bool, ferr *Error) {
	if d.LID != 0 {
		return resolvedEntry{dlid: d.LID}, false, nil
	}
	if e, ok := t.resolved.Get(d); ok {
		return e, true, nil
	}
	if w.src.SMLID == 0 {
		return e, false, fail(StatusResolve, ReasonSA, nil, "cannot resolve %s: the local port knows no SM LID (is a subnet manager running?)", d.Address())
	}
	e.want = wantFor(d)
	switch d.Kind() {
	case "gid", "guid":
		dgid := d.GID
		if d.Kind() == "guid" {
			dgid = ibmad.MakeGID(w.prefix(), d.GUID)
		}
		if foreign(w.src, dgid) { // through a router (subnet.go)
			e.dlid, e.remote, ferr = w.routerPath(d, dgid)
			break
		}
		e.pr, ferr = w.pathRecord(d, dgid)
		if ferr == nil {
			e.dlid = e.pr.DLID
		}
	case "node":
		e, ferr = w.nodeRecord(d)
		if ferr == nil { // its SL and GRH (addressing.go)
			e.pr, ferr = w.pathRecord(d, ibmad.MakeGID(w.prefix(), e.want.port))
		}
	}
	if ferr != nil {
		return resolvedEntry{}, false, ferr
	}
	if t.opts.ResolveTTL > 0 {
		t.resolved.Put(d, e)
	}
	return e, false, nil
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
		if errors.Is(err, ibmad.ErrClosed) || errors.Is(err, ibmad.ErrDeviceLost) || errors.Is(err, ibmad.ErrRequestRefused) {
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

// prefix is the local port's GID prefix (the default one when unset).
func (w *walk) prefix() uint64 {
	if w.src.GIDPrefix == 0 {
		return ibmad.DefaultGIDPrefix
	}
	return w.src.GIDPrefix
}

// pathRecord asks the SA for the path to dgid: its DLID, and the SL and
// GRH fields the validation MADs use (addressing.go).
func (w *walk) pathRecord(d Destination, dgid ibmad.GID) (*ibmad.PathRecord, *Error) {
	m, ferr := w.saGet(d, "PathRecord", ibmad.AttrPathRecord, ibmad.PRCompDGID|ibmad.PRCompSGID, func(b []byte) {
		pr := ibmad.PathRecord{DGID: dgid, SGID: w.src.GID()}
		_ = pr.MarshalTo(b)
	})
	if ferr != nil {
		return nil, ferr
	}
	pr := new(ibmad.PathRecord)
	_ = pr.UnmarshalBinary(m.SAData())
	if pr.DLID == 0 {
		return nil, fail(StatusResolve, ReasonSA, nil, "resolving %s: the SA answered DLID 0", d.Address())
	}
	return pr, nil
}

// nodeRecord resolves a node description with SA NodeRecord Gets. A Get
// matches one record per CA port (one per switch), so: the port d names,
// by description and LocalPortNum; otherwise the description alone, and
// if that matches several records, ports 0, 1, 2, ... until the SA knows
// one (OpenSM keeps records of the ports it has discovered only). Port 0
// comes first so that several switches sharing a description fail at once.
// The record's node and port GUIDs are the port a trace must reach.
func (w *walk) nodeRecord(d Destination) (resolvedEntry, *Error) {
	var none resolvedEntry
	if len(d.Node) > ibmad.NodeDescriptionSize {
		return none, fail(StatusResolve, ReasonBadConfig, nil, "node description %q is longer than 64 bytes", d.Node)
	}
	get := func(port uint8, byPort bool) (*ibmad.MAD, error) {
		mask := ibmad.NRCompNodeDesc
		if byPort {
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
	found := func(m *ibmad.MAD) (resolvedEntry, *Error) {
		var nr ibmad.NodeRecord
		_ = nr.UnmarshalBinary(m.SAData())
		if nr.LID == 0 {
			return none, fail(StatusResolve, ReasonSA, nil, "resolving %s: the SA answered LID 0", d.Address())
		}
		return resolvedEntry{dlid: nr.LID, port: nr.NodeInfo.LocalPortNum,
			want: identity{node: nr.NodeInfo.NodeGUID, port: nr.NodeInfo.PortGUID}}, nil
	}
	several := func() *Error {
		return fail(StatusResolve, ReasonSA, nil, "resolving %s: several nodes have this description; trace one of them by GUID or LID", d.Address())
	}
	m, err := get(d.Port, d.Port != 0)
	if err != nil {
		return none, w.saFail(d, "NodeRecord", err, 0)
	}
	switch st := m.Status(); {
	case st == 0:
		return found(m)
	case st.ClassSpecific() == ibmad.SAStatusNoRecords && d.Port != 0:
		return none, fail(StatusResolve, ReasonSA, nil, "resolving %s: the SA knows no port %d of that node (no such node or port, or the port is down)", d.Address(), d.Port)
	case st.ClassSpecific() == ibmad.SAStatusTooManyRecords && d.Port != 0:
		return none, several()
	case st.ClassSpecific() != ibmad.SAStatusTooManyRecords:
		return none, w.saFail(d, "NodeRecord", nil, st)
	}
	// Several records: the node has several ports (or several nodes share
	// the description). Its first port the SA knows.
	for port := 0; port <= 254; port++ {
		m, err := get(uint8(port), true)
		if err != nil {
			return none, w.saFail(d, "NodeRecord", err, 0)
		}
		switch st := m.Status(); {
		case st == 0:
			return found(m)
		case st.ClassSpecific() == ibmad.SAStatusTooManyRecords:
			return none, several()
		case st.ClassSpecific() != ibmad.SAStatusNoRecords:
			return none, w.saFail(d, "NodeRecord", nil, st)
		}
	}
	return none, fail(StatusResolve, ReasonSA, nil, "resolving %s: the SA matched several records but none by port number", d.Address())
}

// saConcurrency bounds the SA queries one tracer has in flight.
const saConcurrency = 4
