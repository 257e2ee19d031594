package collector

import (
	"errors"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// parseLink reads /traces?link=NODE_GUID:PORT, once (trace.ParseLinkPort:
// the same reading as ibtracer --via).
func parseLink(v []string) (*trace.LinkPort, error) {
	if len(v) > 1 {
		return nil, errors.New("link: given twice (one link at a time)")
	}
	l, err := trace.ParseLinkPort(v[0])
	if err != nil {
		return nil, fmt.Errorf("link %w", err)
	}
	return &l, nil
}

// crosses says whether s's latest trace, or its path before the last
// change, crosses the link l names (trace.Result.Crosses, either end,
// either direction): /traces?link= lists the destinations a suspect link
// carries now or carried before the fabric routed around it
// (docs/runbook.md, "Which destinations cross a link").
func (s *destState) crosses(l trace.LinkPort) bool {
	prev, _ := s.previous()
	if prev != nil {
		if _, ok := prev.Crosses(l); ok {
			return true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		return false
	}
	_, ok := s.last.Crosses(l)
	return ok
}
