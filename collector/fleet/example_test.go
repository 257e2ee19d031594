package fleet_test

import (
	"fmt"
	"time"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/collector/fleet"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// The steps of one refresh: the ports a selector picks from the SA's
// inventory, their destinations, and a sample of them.
func Example() {
	inventory := []fleet.InventoryPort{
		{NodeGUID: 0x100, PortGUID: 0x101, LID: 10, Port: 1, NodeType: ibmad.NodeTypeCA, NodeDesc: "db01 HCA-1"},
		{NodeGUID: 0x200, PortGUID: 0x201, LID: 11, Port: 1, NodeType: ibmad.NodeTypeCA, NodeDesc: "db02 HCA-1"},
		{NodeGUID: 0x300, PortGUID: 0x301, LID: 12, Port: 1, NodeType: ibmad.NodeTypeCA, NodeDesc: "web01 HCA-1"},
		{NodeGUID: 0x900, PortGUID: 0x900, LID: 1, Port: 0, NodeType: ibmad.NodeTypeSwitch, NodeDesc: "leaf01"},
	}
	sel := config.Selector{All: true, Sample: 1}
	const self = 0x101 // the exporter's own port: never its own destination
	all := fleet.Destinations(&sel, fleet.MatchPorts(&sel, inventory, self), nil)
	for _, d := range all {
		fmt.Println(d.Name, d.LID)
	}
	sample := fleet.Sample(all, sel.Sample, "0x0000000000000101", 0, time.Unix(1800000000, 0), time.Hour)
	fmt.Println(len(sample), "of", len(all))
	// Output:
	// db02 HCA-1/1 11
	// web01 HCA-1/1 12
	// 1 of 2
}
