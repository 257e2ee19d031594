package collector_test

import (
	"errors"
	"fmt"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/collector"
	"github.com/ibtracer/ibtracer_exporter/collector/config"
)

// An exporter is handed its configuration and device whole; without a
// device, device_up is 0 and says why, and the destinations wait.
func ExampleExporter_Install() {
	cfg, err := config.Parse("ibtracer.yml", []byte("destinations:\n  - {name: db01, lid: 12}\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	e := collector.New(log.NewNopLogger(), "")
	defer e.Stop()
	e.Install(collector.Runtime{Config: cfg, DeviceErr: errors.New("no InfiniBand device")})

	mfs, _ := collector.NewRegistry(e).Gather()
	for _, mf := range mfs {
		switch mf.GetName() {
		case "ibtracer_device_up", "ibtracer_destinations":
			fmt.Println(mf.GetName(), mf.GetMetric()[0].GetGauge().GetValue())
		case "ibtracer_device_down_reason":
			fmt.Println(mf.GetName(), mf.GetMetric()[0].GetLabel()[0].GetValue())
		}
	}
	fmt.Println(e.Traces()[0].Name, e.Traces()[0].Last == nil)
	// Output:
	// ibtracer_destinations 1
	// ibtracer_device_down_reason error
	// ibtracer_device_up 0
	// db01 true
}
