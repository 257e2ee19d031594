package config

import (
	"fmt"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Share is a share of a whole, written 0.05 for 5 %: health's
// xmit_wait_limit, the share of an interval's ticks a link end may wait
// to transmit before the link is congested (docs/metrics.md,
// "Congestion").
type Share float64

// UnmarshalYAML reads a share: a number above 0 and at most 1.
func (s *Share) UnmarshalYAML(n *yaml.Node) error {
	v, err := strconv.ParseFloat(n.Value, 64)
	if n.Kind != yaml.ScalarNode || err != nil || math.IsNaN(v) || v <= 0 || v > 1 {
		return fmt.Errorf("line %d: health.xmit_wait_limit: %q is not a share above 0 and at most 1 (0.05 is 5%% of the interval)",
			n.Line, n.Value)
	}
	*s = Share(v)
	return nil
}
