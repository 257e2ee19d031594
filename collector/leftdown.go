package collector

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/fabricstr"
	"github.com/ibtracer/ibtracer_exporter/localize"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// Links paths left (docs/metrics.md, "Links paths left"): when a
// destination's path changes, the links of the old path that the new one
// does not cross are read at their near end (PortInfo by directed route,
// along the old path). A link that is not Active is one the path left
// because it went down (a pulled cable routed around), not a re-balancing
// by the SM: the destination keeps an entry for it until the link is
// Active again or the path crosses it again.

var (
	dLinkLeftDown = desc("link_left_down", "Destinations whose traced path left this link and for which the link "+
		"is down now (PortInfo of its near end, as last read); a series only for such links.", localize.LabelNames...)
	dLinkLeftForgotten = desc("link_left_down_forgotten_total", "Left links a destination forgot, its oldest, "+
		"because it had more than 64 (the most links a path has).")
)

const (
	leftMax      = 64               // entries per destination: the most links a path can have
	leftNoAnswer = 30 * time.Minute // an entry without an answer for this long is dropped
)

// leftEnd is an end of a left link as the old path's hop named it.
type leftEnd struct {
	guid       ibmad.GUID
	port       uint8
	desc, name string
}

func (e *leftEnd) label() string { return trace.NodeLabel(e.name, e.desc, e.guid) }

// leftEntry is a link a destination's path left that was down at the
// last answer, or pending (not read yet): its ends, the directed route to
// its near end (the old path's) and since when.
type leftEntry struct {
	link      localize.Link
	near, far leftEnd
	dr        ibmad.DRPath
	since     time.Time       // when the path left it
	answered  time.Time       // the last answer to a read of its near end (pending: since)
	state     ibmad.PortState // as last read
	// pending: the read at the change had no answer (an SMA busy during
	// the SM's sweep): not exported until a read says it is down.
	pending bool
}

// leftLinks are a destination's entries (guarded by destState.mu; only
// its trace changes them).
type leftLinks []leftEntry

// crossedLinks are the links r crosses (localize.PathLinks), as a set.
func crossedLinks(r *trace.Result) map[localize.Link]bool {
	ls := localize.PathLinks(r)
	out := make(map[localize.Link]bool, len(ls))
	for _, l := range ls {
		out[l] = true
	}
	return out
}

// changedFrom is the path r replaced when observe (history.go) found a
// change at r, else nil: the ops state's previous path, kept once.
func changedFrom(s *destState, r *trace.Result) *trace.Result {
	o := &s.ops
	o.mu.Lock()
	defer o.mu.Unlock()
	if !reached(r) || o.path != r || o.prev == nil || !o.prevEnd.Equal(r.Start.Add(r.Duration)) {
		return nil
	}
	return o.prev
}

// changedPaths are the paths of before that a path of now with the same
// DLID replaced: both walked, and they differ.
func changedPaths(before, now []*trace.Result) []*trace.Result {
	by := map[uint16]*trace.Result{}
	for _, r := range before {
		if r != nil && reached(r) {
			by[r.DLID] = r
		}
	}
	var out []*trace.Result
	for _, r := range now {
		if o := by[r.DLID]; o != nil && reached(r) && o.Signature() != r.Signature() {
			out = append(out, o)
		}
	}
	return out
}

// leftPaths is what a trace tells checkLeft: the paths now (every LID's
// with paths: all; those that did not walk tell nothing), the old paths a
// change left (nil: none), and the trace whose addressing the reads use.
type leftPaths struct {
	probe    *trace.Result
	now, old []*trace.Result
}

// singleLeft is leftPaths of a destination's one trace r, observed
// already: the old path is the one the logs' "path changed" names, or,
// at the first walk after a reload replaced the state, the path the
// replaced state last saw (carryLeft).
func singleLeft(s *destState, r *trace.Result) leftPaths {
	lp := leftPaths{probe: r, now: []*trace.Result{r}}
	var carried []*trace.Result
	if reached(r) {
		s.mu.Lock()
		carried, s.carried = s.carried, nil
		s.mu.Unlock()
	}
	if old := changedFrom(s, r); old != nil {
		lp.old = []*trace.Result{old}
	} else {
		lp.old = changedPaths(carried, lp.now)
	}
	return lp
}

// lastPaths are s's last set's paths (paths: all), or those a reload
// carried over before the first set; the set's trace calls it before it
// records the new set, and takes the carried ones.
func lastPaths(s *destState) []*trace.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	carried := s.carried
	s.carried = nil
	if s.set != nil {
		return s.set.Paths
	}
	return carried
}

// setLeft is leftPaths of a paths: all destination's set ps, against
// before, the previous set's paths (lastPaths): a link any LID's old path
// crossed that no LID's new path crosses is left.
func setLeft(before []*trace.Result, ps *trace.PathSet) leftPaths {
	return leftPaths{probe: ps.Worst(), now: ps.Paths, old: changedPaths(before, ps.Paths)}
}

// carryLeft hands the left links of a state that a reload replaced (its
// interval, labels or paths changed: destset.go) to its successor when
// both trace the same unicast target, with the paths it last saw, which
// the successor's first walk is compared with.
func carryLeft(from, to *destState) {
	if from.target != to.target || from.cfg.Multicast() || to.cfg.Multicast() {
		return
	}
	from.ops.mu.Lock()
	path := from.ops.path // the last path that walked
	from.ops.mu.Unlock()
	from.mu.Lock()
	left, carried := slices.Clone(from.left), from.carried
	if from.set != nil {
		carried = from.set.Paths
	} else if path != nil {
		carried = []*trace.Result{path}
	}
	from.mu.Unlock()
	to.mu.Lock()
	to.left, to.carried = left, carried
	to.mu.Unlock()
}

// leftCheck is what one trace does to the left links of a destination.
type leftCheck struct {
	ctx    context.Context
	tr     *trace.Tracer
	r      *trace.Result
	p      *trace.Probe // nil until the first read
	now    time.Time
	name   string
	logger log.Logger
}

// read reads the PortInfo of e's near end: its state, or an error (the
// context's once the trace's deadline passed: not read).
func (c *leftCheck) read(dr ibmad.DRPath, port uint8) (ibmad.PortState, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if c.p == nil {
		c.p = c.tr.ProbeFor(c.ctx, c.r)
	}
	pi, err := c.p.PortInfo(dr, port)
	if err != nil {
		return 0, err
	}
	return pi.PortState, nil
}

// checkLeft updates s's left links after its trace, observed already
// (lp: its paths): the entries whose link a path of lp crosses again or
// that are Active again go, the others are read again, and a change of
// path adds the links it left that are down or did not answer (pending).
// ctx bounds the reads (the trace's interval): those its deadline leaves
// unread stay as they were, and are read first next time; stop is the
// destination's (a reload or shutdown): once done, nothing is stored. The
// reads' MADs count in the destination's trace MADs (docs/metrics.md,
// "Links paths left"). now is the exporter's clock's time, which the
// entries' since and last answer are.
func checkLeft(ctx, stop context.Context, tr *trace.Tracer, s *destState, lp leftPaths, now time.Time, logger log.Logger, forgot *atomic.Uint64) {
	s.mu.Lock()
	cur := slices.Clone(s.left)
	s.mu.Unlock()
	if (len(cur) == 0 && len(lp.old) == 0) || stop.Err() != nil {
		return
	}
	c := &leftCheck{ctx: ctx, tr: tr, r: lp.probe, now: now, name: s.cfg.Name, logger: logger}
	crossed := map[localize.Link]bool{}
	for _, r := range lp.now {
		if reached(r) {
			maps.Copy(crossed, crossedLinks(r))
		}
	}
	unread, kept := c.recheck(cur, crossed)
	kept = c.added(kept, unread, lp.old, crossed)
	if stop.Err() != nil {
		return // stopped: the reads tell nothing
	}
	kept = append(unread, kept...)
	for len(kept) > leftMax {
		i := 0
		for j := range kept {
			if kept[j].since.Before(kept[i].since) {
				i = j
			}
		}
		level.Warn(logger).Log(append([]any{"msg", "left link forgotten: more than 64", "destination", c.name}, leftKV(&kept[i])...)...)
		forgot.Add(1)
		kept = slices.Delete(kept, i, i+1)
	}
	if len(kept) == 0 {
		kept = nil
	}
	s.mu.Lock()
	s.left = kept
	if c.p != nil {
		s.mads += uint64(c.p.MADs())
	}
	s.mu.Unlock()
}

// recheck drops the entries whose link the path crosses again and reads
// the others again: Active goes, not Active stays (a pending one becomes
// an entry), no answer stays until it has had none for leftNoAnswer. It
// returns apart those the deadline left unread, as they were.
func (c *leftCheck) recheck(cur leftLinks, crossed map[localize.Link]bool) (unread, kept leftLinks) {
	for i := range cur {
		e := cur[i]
		lv := level.Info(c.logger)
		if e.pending {
			lv = level.Debug(c.logger)
		}
		if crossed[e.link] {
			lv.Log(append([]any{"msg", "path back on the link", "destination", c.name, "pending", e.pending}, leftKV(&e)...)...)
			continue
		}
		st, err := c.read(e.dr, e.near.port)
		switch {
		case err != nil && c.ctx.Err() != nil:
			unread = append(unread, e)
			continue
		case err != nil && c.now.Sub(e.answered) >= leftNoAnswer:
			lv.Log(append([]any{"msg", "left link dropped: no answer", "destination", c.name, "pending", e.pending,
				"unanswered_for", c.now.Sub(e.answered).Round(time.Second), "err", err}, leftKV(&e)...)...)
			continue
		case err != nil:
		case st == ibmad.PortStateActive:
			e.state = st
			lv.Log(append([]any{"msg", "link back up", "destination", c.name, "pending", e.pending,
				"down_for", c.now.Sub(e.since).Round(time.Millisecond)}, leftKV(&e)...)...)
			continue
		default:
			e.state, e.answered = st, c.now
			if e.pending {
				e.pending = false
				level.Warn(c.logger).Log(append([]any{"msg", "path left a link that is down", "destination", c.name,
					"left_ago", c.now.Sub(e.since).Round(time.Millisecond)}, leftKV(&e)...)...)
			}
		}
		kept = append(kept, e)
	}
	return unread, kept
}

// added appends to kept the links of the old paths that the paths now
// left (crossed: their links) and that are down now, or pending when the
// read had no answer (or the deadline left it unread). An Active link is
// a re-route around a working one.
func (c *leftCheck) added(kept, unread leftLinks, old []*trace.Result, crossed map[localize.Link]bool) leftLinks {
	has := func(l localize.Link) bool {
		f := func(e leftEntry) bool { return e.link == l }
		return slices.ContainsFunc(kept, f) || slices.ContainsFunc(unread, f)
	}
	for _, o := range old {
		for i := 1; i < len(o.Hops); i++ {
			a, b := &o.Hops[i-1], &o.Hops[i]
			l := localize.NewLink(a.NodeGUID, a.OutPort, b.NodeGUID, b.InPort)
			if crossed[l] || has(l) {
				continue
			}
			e := leftEntry{link: l, dr: slices.Clone(a.DRPath), since: c.now, answered: c.now,
				near: leftEnd{guid: a.NodeGUID, port: a.OutPort, desc: a.NodeDesc, name: a.NodeName},
				far:  leftEnd{guid: b.NodeGUID, port: b.InPort, desc: b.NodeDesc, name: b.NodeName}}
			st, err := c.read(a.DRPath, a.OutPort)
			switch {
			case err != nil:
				e.pending = true
				level.Debug(c.logger).Log("msg", "path left a link: its state is unknown, read again at the next trace",
					"destination", c.name, "link", fmt.Sprintf("%s[%d] -> %s[%d]", a.Label(), a.OutPort, b.Label(), b.InPort), "err", err)
			case st == ibmad.PortStateActive:
				continue // re-routed around a working link
			default:
				e.state = st
				level.Warn(c.logger).Log(append([]any{"msg", "path left a link that is down", "destination", c.name}, leftKV(&e)...)...)
			}
			kept = append(kept, e)
		}
	}
	return kept
}

// leftKV are the log keys naming e's link: each end by name with its GUID
// after and its port, as the old path crossed it, the series' labels and
// the near end's port state as last read.
func leftKV(e *leftEntry) []any {
	v, d := e.link.Labels(), e.descs()
	return []any{"link", fmt.Sprintf("%s[%d] -> %s[%d]", e.near.label(), e.near.port, e.far.label(), e.far.port),
		"node_guid", v[0], "port", v[1], "remote_node_guid", v[2], "remote_port", v[3],
		"node_desc", fabricstr.String(d[0]), "remote_node_desc", fabricstr.String(d[1]), "port_state", e.state}
}

// descs are the node descriptions of e's ends in its link's order
// (localize.NewLink's: the labels').
func (e *leftEntry) descs() [2]string {
	if e.link.NodeGUID != e.near.guid || e.link.Port != e.near.port {
		return [2]string{e.far.desc, e.near.desc}
	}
	return [2]string{e.near.desc, e.far.desc}
}

// collectLeftDown emits link_left_down, one series per link some
// destination left while it is down, and the forgotten counter once
// there is a left link or was one forgotten (at 0 before the first: a
// healthy fabric has neither series); it returns those links with their
// ends' node descriptions (in the link's order) for link_info.
func collectLeftDown(ch chan<- prometheus.Metric, dests []*destState, forgot uint64) map[localize.Link][2]string {
	var count map[localize.Link]int
	var descs map[localize.Link][2]string
	for _, s := range dests {
		s.mu.Lock()
		for i := range s.left {
			e := &s.left[i]
			if e.pending {
				continue // not read yet
			}
			if count == nil {
				count, descs = map[localize.Link]int{}, map[localize.Link][2]string{}
			}
			count[e.link]++
			descs[e.link] = e.descs()
		}
		s.mu.Unlock()
	}
	keys := make([]localize.Link, 0, len(count))
	for l := range count {
		keys = append(keys, l)
	}
	if len(keys) > 0 || forgot > 0 {
		ch <- prometheus.MustNewConstMetric(dLinkLeftForgotten, prometheus.CounterValue, float64(forgot))
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Less(keys[j]) })
	for _, l := range keys {
		ch <- prometheus.MustNewConstMetric(dLinkLeftDown, prometheus.GaugeValue, float64(count[l]), l.Labels()...)
	}
	return descs
}
