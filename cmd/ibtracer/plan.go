package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/plan"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// planUsage reads --plan (and --write) before any device is opened: the
// plan must parse (a malformed one is its file, line and fault), unless
// --write is to write it. It returns nil without --plan.
func (o *options) planUsage() (*plan.Plan, error) {
	switch {
	case o.plan == "" && o.writePlan:
		return nil, fmt.Errorf("--write writes the plan --plan FILE names; see ibtracer --help")
	case o.plan == "":
		return nil, nil
	case o.mlid != "":
		return nil, fmt.Errorf("--plan does not combine with -m (a multicast path is not a destination's route)")
	case o.lmcAll:
		return nil, fmt.Errorf("--plan does not combine with --lmc-all")
	}
	if len(o.positional)+len(o.lids)+len(o.gids)+len(o.guids)+len(o.nodes) == 0 {
		o.all = true
	}
	if o.writePlan {
		return nil, nil
	}
	p, err := plan.ParseFile(o.plan)
	if err != nil {
		return nil, fmt.Errorf("--plan: %w", err)
	}
	return p, nil
}

// foundLinks are the links the paths crossed, once each, with both
// ends as the health check read them: their width and speed, the node
// type for --write. A link whose far end was not reached is left out.
func foundLinks(healths []*linkhealth.PathHealth) []plan.Found {
	type key struct {
		a, b uint64
		pa   uint8
		pb   uint8
	}
	seen := map[key]bool{}
	var out []plan.Found
	for _, ph := range healths {
		if ph == nil {
			continue
		}
		for _, l := range ph.Links {
			if l.A.NodeGUID == 0 || l.B.NodeGUID == 0 || l.A.Port == 0 || l.B.Port == 0 {
				continue
			}
			k := key{uint64(l.A.NodeGUID), uint64(l.B.NodeGUID), l.A.Port, l.B.Port}
			if k.a > k.b || k.a == k.b && k.pa > k.pb {
				k = key{k.b, k.a, k.pb, k.pa}
			}
			if seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, plan.Found{A: foundEnd(l.A), B: foundEnd(l.B), Width: l.Width, Speed: l.Speed})
		}
	}
	return out
}

func foundEnd(e linkhealth.LinkEnd) plan.FoundEnd {
	return plan.FoundEnd{GUID: e.NodeGUID, Desc: e.NodeDesc, Name: e.NodeName, Port: e.Port, Type: e.NodeType}
}

// writePlanFile writes the links as ibnetdiscover's output to path, in
// full or not at all (a temporary file renamed over it).
func writePlanFile(path string, links []plan.Found) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ibtracer-plan-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := plan.WriteIBNetDiscover(tmp, links); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// jsonPlanEnd is a link end in --plan's JSON: found ends carry the GUID,
// description and node-name-map name; planned ends the plan's name and
// GUID (empty when the plan has none).
type jsonPlanEnd struct {
	Node     string `json:"node"`
	NodeGUID string `json:"node_guid,omitempty"`
	NodeDesc string `json:"node_desc,omitempty"`
	Port     uint8  `json:"port"`
}

type jsonPlanLink struct {
	Status string           `json:"status"`
	A      jsonPlanEnd      `json:"a"`
	B      jsonPlanEnd      `json:"b"`
	Width  int              `json:"width_lanes"`
	Speed  linkhealth.Speed `json:"speed"`
	// Planned is the planned link at a's port (else b's); WantA and
	// WantB where each end should go when that is elsewhere.
	Planned *jsonPlanned `json:"planned"`
	WantA   *jsonPlanEnd `json:"want_a,omitempty"`
	WantB   *jsonPlanEnd `json:"want_b,omitempty"`
	Why     string       `json:"why,omitempty"`
}

type jsonPlanned struct {
	A     jsonPlanEnd      `json:"a"`
	B     jsonPlanEnd      `json:"b"`
	Width int              `json:"width_lanes,omitempty"`
	Speed linkhealth.Speed `json:"speed,omitempty"`
	Line  int              `json:"line"`
}

// jsonPlanReport is --plan's JSON document.
type jsonPlanReport struct {
	Plan         string             `json:"plan"`
	Format       string             `json:"format"`
	PlannedLinks int                `json:"planned_links"`
	Traced       int                `json:"traced"`
	Judged       int                `json:"links_judged"`
	Counts       map[string]int     `json:"counts"`
	NotCrossed   int                `json:"planned_links_not_crossed"`
	Links        []jsonPlanLink     `json:"links"`
	Failed       []trace.JSONResult `json:"failed"`
}

func planEnd(e plan.End) *jsonPlanEnd {
	j := jsonPlanEnd{Node: e.Node, Port: e.Port}
	if e.GUID != 0 {
		j.NodeGUID = e.GUID.String()
	}
	return &j
}

func foundJSON(e plan.FoundEnd) jsonPlanEnd {
	return jsonPlanEnd{Node: e.Label(), NodeGUID: e.GUID.String(), NodeDesc: e.Desc, Port: e.Port}
}

func (j *jsonPlanLink) set(jd plan.Judgement) {
	*j = jsonPlanLink{Status: jd.Status, A: foundJSON(jd.Found.A), B: foundJSON(jd.Found.B), Width: jd.Found.Width,
		Speed: jd.Found.Speed, Why: jd.Why}
	if jd.Plan != nil {
		j.Planned = &jsonPlanned{A: *planEnd(jd.Plan.A), B: *planEnd(jd.Plan.B), Width: jd.Plan.Width, Speed: jd.Plan.Speed, Line: jd.Plan.Line}
	}
	if jd.WantA != nil {
		j.WantA = planEnd(*jd.WantA)
	}
	if jd.WantB != nil {
		j.WantB = planEnd(*jd.WantB)
	}
}

// judgeAll judges every found link, worst first (plan.Statuses), then
// by the found ends; counts has every status; notCrossed is how many
// planned links no path crossed.
func judgeAll(p *plan.Plan, found []plan.Found) (js []plan.Judgement, counts map[string]int, notCrossed int) {
	counts = map[string]int{}
	for _, s := range plan.Statuses {
		counts[s] = 0
	}
	crossed := map[*plan.Link]bool{}
	for _, f := range found {
		j := p.Judge(f)
		counts[j.Status]++
		if j.Status == plan.Planned || j.Status == plan.BelowPlan {
			crossed[j.Plan] = true
		}
		js = append(js, j)
	}
	rank := map[string]int{}
	for i, s := range plan.Statuses {
		rank[s] = i
	}
	sort.SliceStable(js, func(a, b int) bool {
		if rank[js[a].Status] != rank[js[b].Status] {
			return rank[js[a].Status] < rank[js[b].Status]
		}
		return js[a].Found.A.String()+js[a].Found.B.String() < js[b].Found.A.String()+js[b].Found.B.String()
	})
	return js, counts, len(p.Links) - len(crossed)
}

// printPlan writes --plan's answer (docs/cli.md, "--plan"): in
// ibdiagnet's spirit, -E- for a miswired link, -W- for one below the
// plan or not in it, -I- for the counts; JSON carries every judged link.
// The exit status is 1 when a link is not as planned, else the traces'.
func printPlan(o *options, p *plan.Plan, found []plan.Found, results []*trace.Result, mads runMADs, stdout, stderr io.Writer) int {
	js, counts, notCrossed := judgeAll(p, found)
	var failed []*trace.Result
	for _, r := range results {
		if !r.Status.Walked() {
			failed = append(failed, r)
		}
	}
	out := output{n: 1, totals: results, mads: mads,
		json: func() any {
			doc := jsonPlanReport{Plan: p.File, Format: p.Format, PlannedLinks: len(p.Links), Traced: len(results), Judged: len(js),
				Counts: counts, NotCrossed: notCrossed, Links: make([]jsonPlanLink, len(js)), Failed: []trace.JSONResult{}}
			for i, j := range js {
				doc.Links[i].set(j)
			}
			for _, r := range failed {
				doc.Failed = append(doc.Failed, r.JSON())
			}
			return doc
		},
		summary: func(w io.Writer, _ int) { writePlanText(w, p, js, counts, notCrossed, len(results), failed) }}
	out.verbose = out.summary
	if !out.print(o, stdout, stderr) {
		return exitDevice
	}
	code := exitCode(results, nil)
	if code == exitOK && counts[plan.Planned] != len(js) {
		code = exitMismatch
	}
	return code
}

func writePlanText(w io.Writer, p *plan.Plan, js []plan.Judgement, counts map[string]int, notCrossed, traced int, failed []*trace.Result) {
	tag := map[string]string{plan.Miswired: "-E-", plan.BelowPlan: "-W-", plan.NotInPlan: "-W-"}
	for _, j := range js {
		if j.Status == plan.Planned {
			continue
		}
		fmt.Fprintf(w, "%s %s: %s -> %s: %s\n", tag[j.Status], j.Status, j.Found.A, j.Found.B, j.Why)
	}
	fmt.Fprintf(w, "-I- plan %s (%s, %d links): %d links crossed by %d traced paths: %d planned, %d miswired, %d below plan, %d not in plan\n",
		p.File, p.Format, len(p.Links), len(js), traced, counts[plan.Planned], counts[plan.Miswired], counts[plan.BelowPlan], counts[plan.NotInPlan])
	fmt.Fprintf(w, "-I- %d planned links no traced path crossed (the traces see only their own paths)\n", notCrossed)
	for _, r := range failed {
		fmt.Fprintf(w, "-W- trace failed before its links could be judged: %s\n", r.Summary())
	}
}

// runPlan is --plan's end of a run: with --write, FILE written from the
// crossed links; else the crossed links judged (with --via, those of the
// paths that cross its link).
func runPlan(o *options, u usage, results []*trace.Result, healths []*linkhealth.PathHealth, mads runMADs, stdout, stderr io.Writer) int {
	if o.via != "" {
		l, _, err := resolveVia(u.via, u.names, results) // via.go
		if err != nil {
			fmt.Fprintf(stderr, "ibtracer: %v\n", err)
			return exitUsage
		}
		var rs []*trace.Result
		var hs []*linkhealth.PathHealth
		for i, r := range results {
			if _, ok := r.Crosses(l); ok {
				rs, hs = append(rs, r), append(hs, healths[i])
			}
		}
		results, healths = rs, hs
	}
	found := foundLinks(healths)
	if o.writePlan {
		if err := writePlanFile(o.plan, found); err != nil {
			fmt.Fprintf(stderr, "ibtracer: --plan %s --write: %v\n", o.plan, err)
			return exitDevice
		}
		fmt.Fprintf(stderr, "ibtracer: wrote %d links to %s\n", len(found), o.plan)
		return exitCode(results, nil)
	}
	return printPlan(o, u.plan, found, results, mads, stdout, stderr)
}
