package pages

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// The /traces filters take a node by name as well as by GUID: its
// node-name-map name or its node description, looked up among the
// configuration's map and the nodes of the destinations' paths (the
// latest, the last good one and the one before the last change); a name
// several nodes have is refused with the list (docs/runbook.md, "Naming
// nodes").

// nodeIndex is the nodes names are looked up among, built once per
// request and only when a name needs it.
type nodeIndex struct {
	names map[uint64]string // the configuration's node-name-map
	dests []Destination
	nodes *trace.Nodes
}

func (x *nodeIndex) get() *trace.Nodes {
	if x.nodes != nil {
		return x.nodes
	}
	x.nodes = new(trace.Nodes)
	x.nodes.AddMap(x.names)
	for i := range x.dests {
		x.nodes.AddHops(x.dests[i].paths()...)
	}
	return x.nodes
}

// short is at most 64 bytes of a value the request gave, for an error
// that echoes it (cut on a rune boundary, "…" when cut).
func short(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xc0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// nameStatus is the HTTP status of a failed lookup: 400 for a name
// several nodes have (the request must say which), 404 for one no node
// has.
func nameStatus(err error) int {
	var amb *trace.AmbiguousError
	if errors.As(err, &amb) {
		return http.StatusBadRequest
	}
	return http.StatusNotFound
}

// resolveLink resolves ?link='s node (a GUID needs no lookup).
func resolveLink(ref trace.LinkRef, x *nodeIndex) (trace.LinkPort, error) {
	if g, ok := trace.ParseNodeGUID(ref.Node); ok {
		return trace.LinkPort{NodeGUID: g, Port: ref.Port}, nil
	}
	return ref.Resolve(x.get())
}

// pick returns the destinations of dests that names name, in dests'
// order: a configured destination's name is that destination; any other
// value is a node (trace.Nodes.Lookup: a GUID, a node-name-map name or a
// node description) and names the destinations whose path ends at it.
// The error's status is 404 for a value that names nothing, 400 for a
// name several nodes have.
func pick(dests []Destination, names []string, x *nodeIndex) ([]Destination, int, error) {
	want := map[string]bool{}
	byName := make(map[string]bool, len(dests))
	for _, s := range dests {
		byName[s.Name] = true
	}
	for _, n := range names {
		if byName[n] {
			want[n] = true
			continue
		}
		g, err := x.get().Lookup(n)
		var unk *trace.UnknownNameError
		switch {
		case errors.As(err, &unk):
			return nil, http.StatusNotFound, fmt.Errorf("no destination %q is configured, and %v", short(n), err)
		case err != nil:
			return nil, nameStatus(err), fmt.Errorf("destination: %w", err)
		}
		found := false
		for i := range dests {
			if dests[i].endsAt(g) {
				want[dests[i].Name], found = true, true
			}
		}
		if !found {
			label := "{" + g.String() + "}"
			if nd, ok := x.get().Node(g); ok {
				label = nd.Label()
			}
			return nil, http.StatusNotFound, fmt.Errorf("no destination is configured or traced to node %s", label)
		}
	}
	var out []Destination
	for _, s := range dests {
		if want[s.Name] {
			out = append(out, s)
		}
	}
	return out, http.StatusOK, nil
}
