package config

import (
	"path/filepath"

	"github.com/ibtracer/ibtracer_exporter/internal/nodenamemap"
)

// loadNodeNames reads node_name_map, when set, into NodeNames; a relative
// path is relative to the configuration file.
func (c *Config) loadNodeNames(file string, bad badFunc) error {
	if c.NodeNameMap == "" {
		return nil
	}
	p := c.NodeNameMap
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(file), p)
	}
	m, err := nodenamemap.Load(p)
	if err != nil {
		return bad(c.line("node_name_map"), "node_name_map", "%v", err)
	}
	c.NodeNames = m
	return nil
}
