package collector

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/internal/fabricstr"
	"github.com/ibtracer/ibtracer_exporter/internal/logonce"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/localize"
)

// A link whose counters become unavailable (an end's PMA did not answer,
// answered an error status, or answered for another attribute or port)
// is logged when that happens, with the error, and again when its
// counters are read again: once per change, not at every interval nor
// once per destination crossing it (docs/runbook.md, "Link counters
// unavailable"). The series ibtracer_link_counters_state says the same.

// ctrLog is what the logs last said of each link's counters: the links
// of the destinations' last paths, the ones the series show. A scrape
// forgets the others (keep): a link that comes back unavailable after it
// left every path is logged again.
type ctrLog struct {
	mu    sync.Mutex // guards links and gen
	links map[localize.Link]*ctrSeen
	gen   uint64 // observations so far
	// order is held from an observation until its lines are written, so
	// that the lines come out in the order of the observations: the
	// log's last word on a link is the state kept.
	order sync.Mutex
}

// ctrSeen is a link's counters as last logged: unavailable or not and
// since when, the time of the newest reading seen, and the observation
// that last saw the link. Readings are shared for an interval, so a
// trace may record an older reading after another recorded a newer one:
// an older reading changes nothing.
type ctrSeen struct {
	unavailable logonce.State[bool]
	at          time.Time
	gen         uint64
}

// observeAndLog is observe, its lines written to logger before any
// later observation's.
func (c *ctrLog) observeAndLog(logger log.Logger, ph *linkhealth.PathHealth) {
	c.order.Lock()
	defer c.order.Unlock()
	logEvents(logger, c.observe(ph)) // logstate.go
}

// observe folds ph's links into what the logs said and returns the lines
// to log.
func (c *ctrLog) observe(ph *linkhealth.PathHealth) []opsEvent {
	if ph == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.links == nil {
		c.links = map[localize.Link]*ctrSeen{}
	}
	c.gen++
	var out []opsEvent
	for i := range ph.Links {
		l := &ph.Links[i]
		if at, ok := readAt(l); ok { // else counters off
			if ev, ok := c.noteLocked(l, at); ok {
				out = append(out, ev)
			}
		}
	}
	return out
}

// mark is the observation count, before a scrape's snapshot.
func (c *ctrLog) mark() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// keep forgets the links not in links (the scrape's, taken after mark
// returned upTo) unless an observation after upTo saw them: a trace that
// recorded its path while the scrape ran keeps its links.
func (c *ctrLog) keep(links map[localize.Link]*linkhealth.Link, upTo uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, s := range c.links {
		if _, ok := links[k]; !ok && s.gen <= upTo {
			delete(c.links, k)
		}
	}
}

// readAt is the time of l's counter readings, the later end's (ok false:
// counters off).
func readAt(l *linkhealth.Link) (time.Time, bool) {
	if l.A.Counters == nil || l.B.Counters == nil {
		return time.Time{}, false
	}
	at := l.A.Counters.At()
	if b := l.B.Counters.At(); b.After(at) {
		at = b
	}
	return at, true
}

// noteLocked records l's counter state, read at at, and returns the line
// to log when the link's counters became unavailable or available again
// (c.mu held). A link first seen with its counters read logs nothing.
func (c *ctrLog) noteLocked(l *linkhealth.Link, at time.Time) (opsEvent, bool) {
	k := localize.NewLink(l.A.NodeGUID, l.A.Port, l.B.NodeGUID, l.B.Port)
	st := counterState(l) // health.go: the worse end's, as the series
	un := st == linkhealth.CountersUnavailable
	seen := c.links[k]
	if seen == nil {
		seen = &ctrSeen{}
		c.links[k] = seen
	} else if at.Before(seen.at) {
		seen.gen = c.gen
		return opsEvent{}, false
	}
	seen.at, seen.gen = at, c.gen
	old, changed := seen.unavailable.Observe(un, at)
	if !changed || (!old.Known && !un) { // a link first seen with its counters read logs nothing
		return opsEvent{}, false
	}
	kv := linkKV(k, l)
	if !un {
		return opsEvent{kv: append([]any{"msg", "link counters available again"},
			append(kv, "state", st, "unavailable_for", at.Sub(old.Since).Round(time.Millisecond))...)}, true
	}
	kv = append([]any{"msg", "link counters unavailable"}, append(kv, "err", ctrErrors(l),
		"hint", "perfquery -x LID PORT shows what that PMA answers; see the runbook, Link counters unavailable")...)
	return opsEvent{warn: true, kv: kv}, true
}

// linkKV are the log keys naming link k (l's ends): the link for a
// person, each end by name with its GUID and port after (as the path
// crosses it), then the series' labels and the ends' node descriptions.
func linkKV(k localize.Link, l *linkhealth.Link) []any {
	desc, remote := l.A.NodeDesc, l.B.NodeDesc
	if l.A.NodeGUID != k.NodeGUID || l.A.Port != k.Port {
		desc, remote = remote, desc
	}
	v := k.Labels()
	return []any{"link", fmt.Sprintf("%s[%d] -> %s[%d]", l.A.Label(), l.A.Port, l.B.Label(), l.B.Port),
		"node_guid", v[0], "port", v[1], "remote_node_guid", v[2], "remote_port", v[3],
		"node_desc", fabricstr.String(desc), "remote_node_desc", fabricstr.String(remote)}
}

// ctrErrors are the errors of l's ends whose counters are unavailable:
// each names the LID, the port, what was asked and what came back.
func ctrErrors(l *linkhealth.Link) string {
	var errs []string
	for _, c := range []*linkhealth.PortCounterReading{l.A.Counters, l.B.Counters} {
		if c.State == linkhealth.CountersUnavailable {
			errs = append(errs, fabricstr.String(c.Err))
		}
	}
	return strings.Join(errs, "; ")
}
