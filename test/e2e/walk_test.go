package e2e

import (
	"context"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/discover"
)

// discoverWalk returns every node's description and base LID (a CA's first port).
func discoverWalk(ctx context.Context, e *ibmad.Engine) (map[string]uint16, error) {
	sub, err := discover.Walk(ctx, e)
	if err != nil {
		return nil, err
	}
	ports, err := discover.PortLIDs(ctx, e, sub)
	if err != nil {
		return nil, err
	}
	out := map[string]uint16{}
	for _, p := range ports {
		if _, seen := out[p.Node.Desc]; !seen { // a CA's first port
			out[p.Node.Desc] = p.LID
		}
	}
	return out, nil
}
