package main

import (
	"context"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/discover"
)

// discoverWalk returns every node's description and base LID.
func discoverWalk(ctx context.Context, e *ibmad.Engine) (map[string]uint16, error) {
	sub, err := discover.Walk(ctx, e)
	if err != nil {
		return nil, err
	}
	out := map[string]uint16{}
	for _, n := range sub.Nodes {
		m, err := discover.Get(ctx, e, n.Path, ibmad.AttrPortInfo, 0)
		if err != nil {
			return nil, err
		}
		var pi ibmad.PortInfo
		_ = pi.UnmarshalBinary(m.SMPData())
		out[n.Desc] = pi.LID
	}
	return out, nil
}
