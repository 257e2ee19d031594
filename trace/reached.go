package trace

import (
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// identity is the port a destination names, to compare with the port a
// trace reached (docs/architecture.md, "The life of a trace": a resolved
// DLID is checked on every trace). Zero fields are not compared; a lid:
// destination names no port, so it has none.
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
func (w *walk) wrongPort(r *Result) *Error {
	if w == nil || w.want == (identity{}) || len(r.Hops) == 0 || (r.Status != StatusOK && r.Status != StatusMismatch) {
		return nil
	}
	last := &r.Hops[len(r.Hops)-1]
	if w.want.is(last) || (w.remote != nil && last.NodeType == ibmad.NodeTypeRouter) {
		return nil
	}
	how := "resolved just now"
	if w.cachedDLID {
		how = "resolved again"
	}
	return fail(StatusResolve, ReasonWrongPort, nil,
		"%s resolved to LID %d (%s), but LID %d leads to %s, port GUID %s: the SA's answer is out of date (is the SM reassigning LIDs?)",
		r.Destination.Address(), r.DLID, how, r.DLID, name(last), last.PortGUID)
}

// named runs one trace of d and checks that it reached the port d names.
// A trace that relied on facts other traces asked (facts.go) and did
// not succeed is traced again at once reading every fact itself: what
// it saw may be a change, and the shared answers must not hide it. When
// it reached another port with a cached resolution (the SM moved the
// LIDs since), the resolution is dropped and d traced again at once,
// resolved afresh; a trace that still reaches another port, or reached
// one with a fresh resolution, fails with reason wrong_port: never a
// success for another node.
func (t *Tracer) named(d Destination, run func(fresh bool) (*Result, *walk)) *Result {
	r, w := run(false)
	if w.reliedOnShared() && (!r.Status.Succeeded() || w.wrongPort(r) != nil) {
		r, w = again(r, run)
	}
	ferr := w.wrongPort(r)
	if ferr == nil {
		return r
	}
	t.resolved.Delete(d)
	if w.cachedDLID {
		last := &r.Hops[len(r.Hops)-1]
		t.log(false, "msg", "destination's LID leads to another port: resolving it again", "destination", d.String(),
			"address", d.Address(), "old_dlid", r.DLID, "reached", name(last), "reached_port_guid", last.PortGUID)
		r, w = again(r, run)
		if ferr = w.wrongPort(r); ferr == nil {
			return r
		}
		t.resolved.Delete(d)
	}
	r.Status, r.Reason, r.Err = ferr.Status, ferr.Reason, ferr
	return r
}

// again traces once more, reading every fact afresh, after first: the
// result counts the MADs, SA requests and shared facts of both, and
// lasts from first's start.
func again(first *Result, run func(fresh bool) (*Result, *walk)) (*Result, *walk) {
	r, w := run(true)
	r.MADs += first.MADs
	r.SARequests += first.SARequests
	r.SharedFacts += first.SharedFacts
	r.Start = first.Start
	r.Duration = time.Since(first.Start)
	return r, w
}

// noteLocalLID remembers the local port's LID and logs when it changed
// (once per change, not per trace). The SM reassigned it, so it probably
// reassigned others: every cached resolution is dropped.
func (t *Tracer) noteLocalLID(lid uint16) {
	if lid == 0 {
		return
	}
	old := t.localLID.Swap(uint32(lid))
	if old == 0 || old == uint32(lid) {
		return
	}
	t.resolved.DeleteFunc(func(Destination) bool { return true })
	t.log(true, "msg", "the local port's LID changed: resolving every destination again", "old_lid", old, "new_lid", lid)
}

func (t *Tracer) log(warn bool, keyvals ...any) {
	if t.opts.Log != nil {
		t.opts.Log(warn, keyvals...)
	}
}
