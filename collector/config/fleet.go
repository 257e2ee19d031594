package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Discovery defaults and bounds.
const (
	DefaultRefresh = 5 * time.Minute
	MinRefresh     = 10 * time.Second
	DefaultRotate  = time.Hour
	MinRotate      = time.Minute
)

// Selector picks destinations from the ports the SA knows (see
// docs/architecture.md, "Discovered destinations"). Exactly one of All,
// NodeType, NodeDesc or NodeNames says which.
type Selector struct {
	// All: every CA port the SA knows.
	All bool `yaml:"all"`
	// NodeType: "ca" (every CA port) or "switch" (every switch, at port 0).
	NodeType string `yaml:"node_type"`
	// NodeDesc: CA ports whose node description matches this regular
	// expression (RE2, unanchored).
	NodeDesc string `yaml:"node_desc"`
	// NodeNames: the CA ports of the nodes node_name_map gives these names.
	NodeNames []string `yaml:"node_names"`
	// Sample: trace only this many of the selected ports (0: all), a
	// random subset that differs from exporter to exporter and changes
	// every Rotate.
	Sample int      `yaml:"sample"`
	Rotate Duration `yaml:"rotate"`
	// Refresh: how often the SA is asked again.
	Refresh  Duration          `yaml:"refresh"`
	Interval Duration          `yaml:"interval"`
	Hops     *bool             `yaml:"hops"` // default false
	Labels   map[string]string `yaml:"labels"`

	// Regexp is NodeDesc compiled; GUIDs are the node GUIDs of NodeNames.
	Regexp *regexp.Regexp  `yaml:"-"`
	GUIDs  map[uint64]bool `yaml:"-"`
	line   int
	lines  map[string]int
}

// HopSeries reports whether the selector's destinations export per-hop
// series (hops:, default false).
func (s Selector) HopSeries() bool { return s.Hops != nil && *s.Hops }

// Line is where the selector starts in its file.
func (s Selector) Line() int { return s.line }

// recordSelectorLines notes the line of every selector and of its keys.
func recordSelectorLines(root *yaml.Node, c *Config) {
	doc := root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value != "discover" {
			continue
		}
		for j, item := range doc.Content[i+1].Content {
			if j >= len(c.Discover) {
				break
			}
			s := &c.Discover[j]
			s.line, s.lines = item.Line, keyLines(item)
		}
	}
}

func (s *Selector) keyLine(key string) int {
	if l, ok := s.lines[key]; ok {
		return l
	}
	return s.line
}

// check defaults and validates selector i; names is the node-name map,
// interval the file's.
func (s *Selector) check(i int, names map[uint64]string, interval Duration, bad badFunc) error {
	field := func(k string) string { return fmt.Sprintf("discover[%d].%s", i, k) }
	if err := s.checkWhich(i, names, field, bad); err != nil {
		return err
	}
	if err := s.checkTiming(interval, field, bad); err != nil {
		return err
	}
	return checkLabels(s.Labels, s.keyLine("labels"), field("labels"), bad)
}

// checkWhich: exactly one of all, node_type, node_desc and node_names,
// and that one valid (node_desc compiled, node_names looked up).
func (s *Selector) checkWhich(i int, names map[uint64]string, field func(string) string, bad badFunc) error {
	set := 0
	if s.All {
		set++
	}
	if s.NodeType != "" {
		set++
		if s.NodeType != "ca" && s.NodeType != "switch" {
			return bad(s.keyLine("node_type"), field("node_type"), "%q: want ca or switch", s.NodeType)
		}
	}
	if s.NodeDesc != "" {
		set++
		re, err := regexp.Compile(s.NodeDesc)
		if err != nil {
			return bad(s.keyLine("node_desc"), field("node_desc"), "%q is not a regular expression: %v", s.NodeDesc, err)
		}
		s.Regexp = re
	}
	if len(s.NodeNames) > 0 {
		set++
		if err := s.lookUpNames(names, field, bad); err != nil {
			return err
		}
	}
	if set != 1 {
		return bad(s.line, fmt.Sprintf("discover[%d]", i), "set exactly one of all, node_type, node_desc or node_names (found %d)", set)
	}
	return nil
}

// lookUpNames fills GUIDs with the node GUIDs of NodeNames.
func (s *Selector) lookUpNames(names map[uint64]string, field func(string) string, bad badFunc) error {
	if names == nil {
		return bad(s.keyLine("node_names"), field("node_names"), "needs node_name_map")
	}
	byName := map[string][]uint64{}
	for g, n := range names {
		byName[n] = append(byName[n], g)
	}
	s.GUIDs = map[uint64]bool{}
	for _, n := range s.NodeNames {
		gs := byName[n]
		switch {
		case len(gs) == 0:
			return bad(s.keyLine("node_names"), field("node_names"), "%q is not a name in node_name_map", n)
		case len(gs) > 1: // which one was meant is not ours to guess
			slices.Sort(gs)
			list := make([]string, 0, 10)
			for i, g := range gs {
				if i == 10 {
					list = append(list, fmt.Sprintf("and %d more", len(gs)-10))
					break
				}
				list = append(list, fmt.Sprintf("0x%016x", g))
			}
			return bad(s.keyLine("node_names"), field("node_names"), "%q names %d nodes in node_name_map: %s; give each node its own name",
				n, len(gs), strings.Join(list, ", "))
		}
		s.GUIDs[gs[0]] = true
	}
	return nil
}

// checkTiming: sample, rotate, refresh and interval.
func (s *Selector) checkTiming(interval Duration, field func(string) string, bad badFunc) error {
	if s.Sample < 0 || s.Sample > 100000 {
		return bad(s.keyLine("sample"), field("sample"), "%d: want 0 (every port) .. 100000", s.Sample)
	}
	if s.Rotate != 0 && s.Sample == 0 {
		return bad(s.keyLine("rotate"), field("rotate"), "applies only with sample")
	}
	if s.Rotate == 0 {
		s.Rotate = Duration(DefaultRotate)
	}
	if time.Duration(s.Rotate) < MinRotate {
		return bad(s.keyLine("rotate"), field("rotate"), "%v is shorter than %v", time.Duration(s.Rotate), MinRotate)
	}
	if s.Refresh == 0 {
		s.Refresh = Duration(DefaultRefresh)
	}
	if time.Duration(s.Refresh) < MinRefresh {
		return bad(s.keyLine("refresh"), field("refresh"), "%v is shorter than %v", time.Duration(s.Refresh), MinRefresh)
	}
	if s.Interval == 0 {
		s.Interval = interval
	}
	if time.Duration(s.Interval) < MinInterval {
		return bad(s.keyLine("interval"), field("interval"), "%v is shorter than %v", time.Duration(s.Interval), MinInterval)
	}
	return nil
}
