package collector

import (
	"errors"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// parseLink reads /traces?link=NODE:PORT, once, the node by name or GUID
// (trace.ParseLinkRef: the same reading as ibtracer --via).
func parseLink(v []string) (*trace.LinkRef, error) {
	if len(v) > 1 {
		return nil, errors.New("link: given twice (one link at a time)")
	}
	l, err := trace.ParseLinkRef(v[0])
	if err != nil {
		return nil, fmt.Errorf("link %w", err)
	}
	return &l, nil
}

// crosses says whether s's latest trace, the path the link evidence
// takes as its previous one (previousPath: the last good path while the
// destination fails), or its path before the last change crosses the
// link l names (trace.Result.Crosses, either end, either direction):
// /traces?link= lists the destinations a suspect link carries now or
// carried before the fabric routed around it, every one whose evidence
// names it among them (docs/runbook.md, "Which destinations cross a
// link").
func (s *destState) crosses(l trace.LinkPort) bool {
	s.mu.Lock()
	last := s.last
	s.mu.Unlock()
	if last == nil {
		return false // never traced: no path
	}
	before, _ := s.previous()
	for _, r := range []*trace.Result{last, s.previousPath(last), before} {
		if r == nil {
			continue
		}
		if _, ok := r.Crosses(l); ok {
			return true
		}
	}
	return false
}
