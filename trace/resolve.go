package trace

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sa"
)

// resolver turns a destination into a DLID, through the SA for GIDs,
// GUIDs and node names, and keeps the resolutions for Options.ResolveTTL.
// A resolved DLID is checked on every trace (docs/architecture.md, "The
// life of a trace"): a trace that reaches another port than the one its
// destination names drops the resolution (Tracer.named), and so does a
// change of the local port's LID.
type resolver struct {
	ttl      time.Duration // 0: nothing kept
	resolved *ttlCache[Destination, resolvedEntry]
	localLID atomic.Uint32 // the local port's LID the last trace saw
	log      func(warn bool, keyvals ...any)
}

func newResolver(o Options) *resolver {
	r := &resolver{ttl: *o.ResolveTTL, log: o.Log}
	r.resolved = newTTLCache[Destination, resolvedEntry](r.ttl, cacheSize, o.Clock.Now)
	return r
}

// resolvedEntry is what a resolution found.
type resolvedEntry struct {
	dlid uint16
	port uint8
	want identity          // the port the destination names
	pr   *ibmad.PathRecord // its PathRecord: SL and GRH (addressing.go); nil for a LID
	// remote: a GID of another subnet, reached through a router (subnet.go).
	remote *remoteEntry
}

// resolution is one trace's resolution: its entry, and whether it came
// from the cache.
type resolution struct {
	resolvedEntry
	cached bool
}

// identity is the port a destination names, to compare with the port a
// trace reached. Zero fields are not compared; a lid: destination names
// no port, so it has none.
type identity struct {
	node ibmad.GUID // node GUID (node destinations: from the SA's NodeRecord)
	port ibmad.GUID // port GUID (guid, gid: from the address itself)
}

// wantFor is the identity an address names by itself: a port GUID, or a
// GID's interface ID. A node's comes from its NodeRecord (nodeRecord).
func wantFor(d Destination) identity {
	switch d.Kind() {
	case "guid":
		return identity{port: d.GUID}
	case "gid":
		return identity{port: d.GID.GUID()}
	}
	return identity{}
}

// is says whether hop h is the port id names.
func (id identity) is(h *Hop) bool {
	return (id.node == 0 || h.NodeGUID == id.node) && (id.port == 0 || h.PortGUID == id.port)
}

// wrongPort returns why r, a trace that reached its DLID, did not reach
// the port its destination names (nil when it did, or when there is
// nothing to compare): the SM gave that LID to another port since the
// destination was resolved. A GID of another subnet whose walk ended at
// a router has nothing to compare here: the DLID is the router's port,
// and the port the GID names is beyond it, where only the remote SA
// names it (subnet.go). Its status stays what the walk found (ok, which
// beyond makes left_subnet, or a status-7 mismatch on the local part).
func (res *resolution) wrongPort(r *Result) *Error {
	if res.want == (identity{}) || len(r.Hops) == 0 || (r.Status != StatusOK && r.Status != StatusMismatch) {
		return nil
	}
	last := &r.Hops[len(r.Hops)-1]
	if res.want.is(last) || (res.remote != nil && last.NodeType == ibmad.NodeTypeRouter) {
		return nil
	}
	how := "resolved just now"
	if res.cached {
		how = "resolved again"
	}
	return fail(StatusResolve, ReasonWrongPort, nil,
		"%s resolved to LID %d (%s), but LID %d leads to %s, port GUID %s: the SA's answer is out of date (is the SM reassigning LIDs?)",
		r.Destination.Address(), r.DLID, how, r.DLID, name(last), last.PortGUID)
}

// resolve turns d into a DLID, through the SA for GIDs, GUIDs and node
// names; for a node it also returns the port it chose. The entry names
// the port the destination is; cached says it came from the cache.
func (rs *resolver) resolve(w *walk, d Destination) (res resolution, ferr *Error) {
	if d.LID != 0 {
		return resolution{resolvedEntry: resolvedEntry{dlid: d.LID}}, nil
	}
	if e, ok := rs.resolved.Get(d); ok {
		return resolution{resolvedEntry: e, cached: true}, nil
	}
	if w.src.SMLID == 0 {
		return res, fail(StatusResolve, ReasonSA, nil, "cannot resolve %s: the local port knows no SM LID (is a subnet manager running?)", d.Address())
	}
	e := resolvedEntry{want: wantFor(d)}
	switch d.Kind() {
	case "gid", "guid":
		dgid := d.GID
		if d.Kind() == "guid" {
			dgid = ibmad.MakeGID(prefixOf(w.src), d.GUID)
		}
		if foreign(w.src, dgid) { // through a router (subnet.go)
			e.dlid, e.remote, ferr = rs.routerPath(w, d, dgid)
			break
		}
		e.pr, ferr = rs.pathRecord(w, d, dgid)
		if ferr == nil {
			e.dlid = e.pr.DLID
		}
	case "node":
		e, ferr = rs.nodeRecord(w, d)
		if ferr == nil { // its SL and GRH (addressing.go)
			e.pr, ferr = rs.pathRecord(w, d, ibmad.MakeGID(prefixOf(w.src), e.want.port))
		}
	}
	if ferr != nil {
		return resolution{}, ferr
	}
	if rs.ttl > 0 {
		rs.resolved.Put(d, e)
	}
	return resolution{resolvedEntry: e}, nil
}

// noteLocalLID remembers the local port's LID and logs when it changed
// (once per change, not per trace). The SM reassigned it, so it probably
// reassigned others: every cached resolution is dropped.
func (rs *resolver) noteLocalLID(lid uint16) {
	if lid == 0 {
		return
	}
	old := rs.localLID.Swap(uint32(lid))
	if old == 0 || old == uint32(lid) {
		return
	}
	rs.resolved.DeleteFunc(func(Destination) bool { return true })
	if rs.log != nil {
		rs.log(true, "msg", "the local port's LID changed: resolving every destination again", "old_lid", old, "new_lid", lid)
	}
}

// askLocalSA resolves d with one Get to the local SA; a transport error
// or a non-zero status becomes the trace's failure.
func (rs *resolver) askLocalSA(w *walk, d Destination, what string, attr ibmad.AttrID, mask uint64, tmpl []byte) ([]byte, *Error) {
	data, st, err := w.askSA(sa.Address(w.src), attr, mask, tmpl)
	switch {
	case err != nil:
		return nil, rs.saFail(w, d, what, err, 0)
	case st != 0:
		return nil, rs.saFail(w, d, what, nil, st)
	}
	return data, nil
}

// saFail is the failure of a resolution whose SA query got no answer
// (err) or answered status st.
func (rs *resolver) saFail(w *walk, d Destination, what string, err error, st ibmad.Status) *Error {
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

// pathRecord asks the SA for the path to dgid: its DLID, and the SL and
// GRH fields the validation MADs use (addressing.go).
func (rs *resolver) pathRecord(w *walk, d Destination, dgid ibmad.GID) (*ibmad.PathRecord, *Error) {
	data, ferr := rs.askLocalSA(w, d, "PathRecord", ibmad.AttrPathRecord, ibmad.PRCompDGID|ibmad.PRCompSGID,
		wire(&ibmad.PathRecord{DGID: dgid, SGID: w.src.GID()}))
	if ferr != nil {
		return nil, ferr
	}
	pr := new(ibmad.PathRecord)
	_ = pr.UnmarshalBinary(data)
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
func (rs *resolver) nodeRecord(w *walk, d Destination) (resolvedEntry, *Error) {
	var none resolvedEntry
	if len(d.Node) > ibmad.NodeDescriptionSize {
		return none, fail(StatusResolve, ReasonBadConfig, nil, "node description %q is longer than 64 bytes", d.Node)
	}
	get := func(port uint8, byPort bool) ([]byte, ibmad.Status, error) {
		mask := ibmad.NRCompNodeDesc
		if byPort {
			mask |= ibmad.NRCompLocalPortNum
		}
		nr := ibmad.NodeRecord{NodeDescription: ibmad.NewNodeDescription(d.Node)}
		nr.NodeInfo.LocalPortNum = port
		return w.askSA(sa.Address(w.src), ibmad.AttrNodeRecord, mask, wire(&nr))
	}
	found := func(data []byte) (resolvedEntry, *Error) {
		var nr ibmad.NodeRecord
		_ = nr.UnmarshalBinary(data)
		if nr.LID == 0 {
			return none, fail(StatusResolve, ReasonSA, nil, "resolving %s: the SA answered LID 0", d.Address())
		}
		return resolvedEntry{dlid: nr.LID, port: nr.NodeInfo.LocalPortNum,
			want: identity{node: nr.NodeInfo.NodeGUID, port: nr.NodeInfo.PortGUID}}, nil
	}
	several := func() *Error {
		return fail(StatusResolve, ReasonSA, nil, "resolving %s: several nodes have this description; trace one of them by GUID or LID", d.Address())
	}
	data, st, err := get(d.Port, d.Port != 0)
	if err != nil {
		return none, rs.saFail(w, d, "NodeRecord", err, 0)
	}
	switch {
	case st == 0:
		return found(data)
	case st.ClassSpecific() == ibmad.SAStatusNoRecords && d.Port != 0:
		return none, fail(StatusResolve, ReasonSA, nil, "resolving %s: the SA knows no port %d of that node (no such node or port, or the port is down)", d.Address(), d.Port)
	case st.ClassSpecific() == ibmad.SAStatusTooManyRecords && d.Port != 0:
		return none, several()
	case st.ClassSpecific() != ibmad.SAStatusTooManyRecords:
		return none, rs.saFail(w, d, "NodeRecord", nil, st)
	}
	// Several records: the node has several ports (or several nodes share
	// the description). Its first port the SA knows.
	for port := 0; port <= 254; port++ {
		data, st, err := get(uint8(port), true)
		if err != nil {
			return none, rs.saFail(w, d, "NodeRecord", err, 0)
		}
		switch {
		case st == 0:
			return found(data)
		case st.ClassSpecific() == ibmad.SAStatusTooManyRecords:
			return none, several()
		case st.ClassSpecific() != ibmad.SAStatusNoRecords:
			return none, rs.saFail(w, d, "NodeRecord", nil, st)
		}
	}
	return none, fail(StatusResolve, ReasonSA, nil, "resolving %s: the SA matched several records but none by port number", d.Address())
}
