package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"regexp"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/nodenamemap"
	"github.com/ibtracer/ibtracer_exporter/internal/readlimit"
	"github.com/ibtracer/ibtracer_exporter/plan"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// Defaults. The MAD timeout and retries are the engine's, which are
// libibmad's (docs/architecture.md, "Options: one meaning per knob").
const (
	DefaultInterval    = 60 * time.Second
	DefaultTimeout     = ibmad.DefaultTimeout
	DefaultRetries     = ibmad.DefaultRetries
	DefaultConcurrency = 16
	DefaultMADWindow   = 256
	DefaultPerTarget   = 4
	DefaultAgentRate   = 200
	MinInterval        = time.Second
	// DefaultShareValidation is how long a hop's verdict is reused across
	// destinations (see trace.Options.ShareValidation).
	DefaultShareValidation = 10 * time.Second
	// DefaultAgentSupportTTL is how long a node's answer to "do you run
	// the agent?" is trusted: trace's default.
	DefaultAgentSupportTTL = trace.DefaultSupportTTL
	// DefaultResolveTTL is how long an SA resolution of a GID, GUID or
	// node name is reused: trace's default.
	DefaultResolveTTL = trace.DefaultResolveTTL
)

// Config is the whole file.
type Config struct {
	Interval     Duration      `yaml:"interval"`
	Timeout      Duration      `yaml:"timeout"`
	Retries      *int          `yaml:"retries"`
	Concurrency  int           `yaml:"concurrency"`
	MADWindow    int           `yaml:"mad_window"`
	MADPerTarget int           `yaml:"mad_window_per_target"`
	OUI          OUI           `yaml:"oui"`
	SL           uint8         `yaml:"sl"`
	Agent        AgentConfig   `yaml:"agent"`
	Health       HealthConfig  `yaml:"health"` // path health (health.go)
	Destinations []Destination `yaml:"destinations"`
	// JitterSeed replaces the local port GUID as the seed of the
	// destinations' phases (collector.Exporter.SetSeed).
	JitterSeed string `yaml:"jitter_seed"`
	// Validate is who validates each hop: auto, agent, sma or off
	// (checkValidate; the file's old true and false are auto and off).
	Validate        trace.ValidateMode `yaml:"validate"`
	ShareValidation *Duration          `yaml:"share_validation"`
	AgentSupportTTL *Duration          `yaml:"agent_support_ttl"`
	ResolveTTL      *Duration          `yaml:"resolve_ttl"`
	// NodeNameMap is an OFED node-name-map file (internal/nodenamemap);
	// a relative path is relative to the configuration file.
	NodeNameMap string `yaml:"node_name_map"`
	// Discovery is how traces learn the path: smp, sa or auto (the
	// default; checkDiscovery).
	Discovery trace.Discovery `yaml:"discovery"`
	// NodeNames is NodeNameMap read: node GUID to site name (nil: none).
	NodeNames nodenamemap.Map `yaml:"-"`
	// PlanFile is the site's cabling plan (package plan: ibnetdiscover's
	// output or an ibdm topology file); a relative path is relative to the
	// configuration file. Plan is it read (nil: none).
	PlanFile string     `yaml:"plan"`
	Plan     *plan.Plan `yaml:"-"`
	// Fleet scale (fleet.go): MADs per second, and discovered destinations.
	MADRate          float64    `yaml:"mad_rate"`
	MADRatePerTarget float64    `yaml:"mad_rate_per_target"`
	Discover         []Selector `yaml:"discover"`
	lines            map[string]int

	// Evidence is the per-link evidence (evidence.go).
	Evidence EvidenceConfig `yaml:"evidence"`
}

// AgentConfig configures the hosted vendor agent.
type AgentConfig struct {
	Enabled       *bool   `yaml:"enabled"`
	Ping          *bool   `yaml:"ping"`
	RatePerSource float64 `yaml:"rate_per_source"`
	Burst         float64 `yaml:"burst"`
	Hostname      string  `yaml:"hostname"`
}

// Duration is a time.Duration written as "30s", "1m".
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration such as 30s or 1m", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// OUI is a 24-bit vendor OUI, written in hex with 0x (trace.ParseOUI).
type OUI uint32

// UnmarshalYAML parses a 24-bit OUI.
func (o *OUI) UnmarshalYAML(n *yaml.Node) error {
	v, err := trace.ParseOUI(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: oui %v", n.Line, err)
	}
	*o = OUI(v)
	return nil
}

var lineRe = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// Load reads and validates a configuration file; one over
// readlimit.Config's bound is refused.
func Load(path string) (*Config, error) {
	b, err := readlimit.ReadFile(path, readlimit.Config)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: the configuration file is missing; create it (config.example.yml shows every key) or name another with --config.file", err)
	}
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

// Parse decodes and validates b; file names the source in errors.
func Parse(file string, b []byte) (*Config, error) {
	c := &Config{}
	var root yaml.Node
	rootErr := yaml.Unmarshal(b, &root)
	if rootErr == nil {
		if err := checkIntegers(file, &root); err != nil { // numbers.go
			return nil, err
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return nil, decodeError(file, b, err)
	}
	c.lines = map[string]int{}
	if rootErr == nil {
		recordLines(&root, c)
		recordSelectorLines(&root, c)
	}
	if err := c.defaults(file); err != nil {
		return nil, err
	}
	// The per-key lines serve validation's messages only; kept, they cost
	// hundreds of bytes a destination for as long as the configuration
	// runs (docs/metrics.md, "Memory").
	for i := range c.Destinations {
		c.Destinations[i].lines = nil
	}
	for i := range c.Discover {
		c.Discover[i].lines = nil
	}
	return c, nil
}

// recordLines notes the line of every top-level key and of every
// destination and its keys.
func recordLines(root *yaml.Node, c *Config) {
	doc := root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		key := doc.Content[i]
		c.lines[key.Value] = key.Line
		if key.Value != "destinations" {
			continue
		}
		for j, item := range doc.Content[i+1].Content {
			if j >= len(c.Destinations) {
				break
			}
			d := &c.Destinations[j]
			d.line, d.lines = item.Line, keyLines(item)
		}
	}
}

// keyLines maps each key of a YAML mapping to its line.
func keyLines(m *yaml.Node) map[string]int {
	lines := map[string]int{}
	for k := 0; k+1 < len(m.Content); k += 2 {
		lines[m.Content[k].Value] = m.Content[k].Line
	}
	return lines
}

// has says whether the file sets a top-level key.
func (c *Config) has(key string) bool {
	_, ok := c.lines[key]
	return ok
}

// line returns the line of a top-level key, or 1.
func (c *Config) line(key string) int {
	if l, ok := c.lines[key]; ok {
		return l
	}
	return 1
}

var labelNameRe = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// ReservedLabels are the label names the exporter sets itself, and
// "destination", which would read as its "dest".
var ReservedLabels = map[string]bool{"dest": true, "destination": true, "hop": true, "node_guid": true, "node_desc": true,
	"node_type": true, "in_port": true, "out_port": true, "lid": true, "status": true, "verdict": true, "validated_by": true, "result": true, "reason": true,
	"class": true, "port_guid": true, "le": true, "instance": true, "job": true, "address": true, "kind": true, "ibtracer_args": true, "lid_offset": true, "mode": true}

// LabelNames returns the union of every destination's label names, sorted.
func (c *Config) LabelNames() []string {
	set := map[string]bool{}
	for _, d := range c.Destinations {
		for k := range d.Labels {
			set[k] = true
		}
	}
	for _, d := range c.Discover {
		for k := range d.Labels {
			set[k] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}
