package sa_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sa"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// The SA's NodeRecord table of the built-in simulated fabric, read from
// host H0-0 (one GetTable, reassembled from RMPP), then one record by
// LID.
func ExampleNodeRecords() {
	topo, _ := sim.FatTree2(2, 1, 2, 1) // leaves L0, L1; spine S0; hosts H<leaf>-<n>
	fabric, _ := sim.New(topo, sim.Options{})
	tr, _ := fabric.Attach("H0-0", 0)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: time.Second})
	defer e.Close()
	port, _ := tr.Port()
	ctx := context.Background()

	recs, err := sa.NodeRecords(ctx, e, sa.Address(port))
	if err != nil {
		fmt.Println(err)
		return
	}
	cas := 0
	for _, r := range recs {
		if r.NodeInfo.NodeType == ibmad.NodeTypeCA {
			cas++
		}
	}
	fmt.Println(len(recs), "records,", cas, "CA ports")

	lid, _ := fabric.LIDOf("H1-1", 1)
	r, err := sa.NodeRecordOf(ctx, e, sa.Address(port), lid)
	fmt.Println(r.NodeDescription.String(), err)
	_, err = sa.NodeRecordOf(ctx, e, sa.Address(port), 999)
	fmt.Println(sa.IsNoRecords(err))
	// Output:
	// 7 records, 4 CA ports
	// H1-1 <nil>
	// true
}
