package main

import (
	"fmt"
	"io"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// resolveVia turns --via's node into a GUID: a GUID as written; a name
// (a node-name-map name, or a node description) must be the name of
// exactly one node among the map's and the traced hops' (docs/runbook.md,
// "Naming nodes"). The label is the link end for a person: the node's
// name, its GUID, the port.
func resolveVia(ref trace.LinkRef, names map[uint64]string, results []*trace.Result) (l trace.LinkPort, label string, err error) {
	var nodes trace.Nodes
	nodes.AddMap(names)
	nodes.AddHops(results...)
	if l, err = ref.Resolve(&nodes); err != nil {
		return l, "", fmt.Errorf("--via %q: %w", ref.String(), err)
	}
	label = "{" + l.NodeGUID.String() + "}"
	if n, ok := nodes.Node(l.NodeGUID); ok {
		label = n.Label()
	}
	return l, fmt.Sprintf("%s:%d", label, l.Port), nil
}

// jsonLinkEnd is one end of a crossed link in --via's JSON.
type jsonLinkEnd struct {
	NodeGUID string `json:"node_guid"`
	NodeDesc string `json:"node_desc"`
	Port     uint8  `json:"port"`
}

// jsonCrossing is a destination whose path crosses the link: the hop
// where (the link's far end is hop, its near end hop-1), both ends as
// traced (to is null when the trace stopped at the near end), and the
// trace itself.
type jsonCrossing struct {
	Destination string           `json:"destination"`
	Address     string           `json:"address"`
	DLID        uint16           `json:"dlid,omitempty"`
	Status      string           `json:"status"`
	Hop         int              `json:"hop"`
	From        jsonLinkEnd      `json:"from"`
	To          *jsonLinkEnd     `json:"to"`
	Trace       trace.JSONResult `json:"trace"`
}

// jsonVia is --via's JSON document: the link, how many destinations were
// traced, those that cross it, and the failed traces that stopped before
// they could tell (undetermined).
type jsonVia struct {
	Link         string             `json:"link"`
	Traced       int                `json:"traced"`
	Crossing     []jsonCrossing     `json:"crossing"`
	Undetermined []trace.JSONResult `json:"undetermined"`
}

func linkEnd(e trace.LinkEnd) jsonLinkEnd {
	return jsonLinkEnd{NodeGUID: e.NodeGUID.String(), NodeDesc: e.NodeDesc, Port: e.Port}
}

// viaSets splits the traces: those whose path crosses l (with where), and
// the failed ones that did not get far enough to tell. A trace that
// succeeded and does not cross l is in neither.
func viaSets(results []*trace.Result, l trace.LinkPort) (cross []*trace.Result, at []trace.Crossing, undetermined []*trace.Result) {
	for _, r := range results {
		if c, ok := r.Crosses(l); ok {
			cross, at = append(cross, r), append(at, c)
			continue
		}
		if !r.Status.Walked() { // left_subnet walked its local path too
			undetermined = append(undetermined, r)
		}
	}
	return cross, at, undetermined
}

// seesNode says whether any traced hop is the node l names.
func seesNode(results []*trace.Result, l trace.LinkPort) bool {
	for _, r := range results {
		for _, h := range r.Hops {
			if h.NodeGUID == l.NodeGUID {
				return true
			}
		}
	}
	return false
}

func destLabel(r *trace.Result) string {
	s := r.Destination.Address()
	if r.Destination.Name != "" && r.Destination.Name != s {
		s += " (" + r.Destination.Name + ")"
	}
	if r.DLID != 0 && r.Destination.LID == 0 {
		s += fmt.Sprintf(" -> lid %d", r.DLID)
	}
	return s
}

// printVia writes --via's answer in the form o asks for (label is the
// link end for a person, resolveVia): the destinations
// whose path crosses l, each with the hop where (with -v, each trace in
// full), then the failed traces that could not tell; the totals line with
// --all (with mads, the MADs the run sent), as without --via. It returns the exit status: the traces', as
// without --via (exitCode; --via refuses --health), or a device error
// when the output could not be written.
func printVia(o *options, l trace.LinkPort, label string, results []*trace.Result, mads runMADs, stdout, stderr io.Writer) int {
	cross, at, und := viaSets(results, l)
	if !seesNode(results, l) {
		fmt.Fprintf(stderr, "ibtracer: --via: no traced path passes node %s (--via takes a node GUID or a node's name; a CA's port GUID differs from its node GUID)\n", l.NodeGUID)
	}
	out := output{n: 1, totals: results, mads: mads, // output.go: buffered, totals, a write error is exit 6
		json: func() any {
			doc := jsonVia{Link: l.String(), Traced: len(results), Crossing: []jsonCrossing{}, Undetermined: []trace.JSONResult{}}
			for i, r := range cross {
				c := at[i]
				jc := jsonCrossing{Destination: r.Destination.String(), Address: r.Destination.Address(), DLID: r.DLID,
					Status: string(r.Status), Hop: c.Hop, From: linkEnd(c.From), Trace: r.JSON()}
				if c.Far {
					to := linkEnd(c.To)
					jc.To = &to
				}
				doc.Crossing = append(doc.Crossing, jc)
			}
			for _, r := range und {
				doc.Undetermined = append(doc.Undetermined, r.JSON())
			}
			return doc
		},
		verbose: func(w io.Writer, _ int) { writeViaText(true, label, results, cross, at, und, w) },
		summary: func(w io.Writer, _ int) { writeViaText(false, label, results, cross, at, und, w) }}
	if !out.print(o, stdout, stderr) {
		return exitDevice
	}
	return exitCode(results, nil)
}

func writeViaText(verbose bool, label string, results, cross []*trace.Result, at []trace.Crossing, und []*trace.Result, w io.Writer) {
	fmt.Fprintf(w, "link %s: %d of %d traced destinations cross it\n", label, len(cross), len(results))
	for i, r := range cross {
		status := ""
		if !r.Status.Succeeded() {
			status = fmt.Sprintf(" (trace %s: %v)", r.Status, r.Err)
		}
		if verbose {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: %s%s\n", destLabel(r), at[i], status)
		if verbose {
			r.WriteVerbose(w)
		}
	}
	if len(und) == 0 {
		return
	}
	fmt.Fprintf(w, "%d failed before they could tell:\n", len(und))
	for _, r := range und {
		fmt.Fprintln(w, r.Summary())
	}
}
