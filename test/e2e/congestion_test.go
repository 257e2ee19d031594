package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
)

// congestSW2Port1 makes sw2[1], the egress to host2 on the path to far,
// wait on VL 2 (ibsim's PerformanceSet raises PortXmitWait and
// PortVLXmitWaitCounters a step at a time), until the Prometheus at
// promAddr has scraped the exporter's congestion series for that link:
// a ratio above 0 and ibtracer_link_xmit_wait_vl{vl="2"}. The exporter
// reads the VLs only when PortXmitWait rose between two readings
// (docs/metrics.md, "Congestion"), so the counters keep rising until
// then.
func congestSW2Port1(t *testing.T, fab *ibsimtest.Fabric, promAddr string) {
	t.Helper()
	step := 0
	var err error
	if !poll(60*time.Second, 500*time.Millisecond, func() bool {
		step++
		for _, cmd := range []string{
			fmt.Sprintf(`PerformanceSet "sw2"[1] PortVLXmitWaitCounters.PortVLXmitWaitCounters2=%d`, 1000*step),
			fmt.Sprintf(`PerformanceSet "sw2"[1] PortCounters.PortXmitWait=%d`, 1000*step),
		} {
			if err = fab.Console(cmd); err != nil {
				return false
			}
		}
		var n int
		n, err = promtest.Query(promAddr, `max_over_time(ibtracer_link_xmit_wait_vl{vl="2"}[1m]) == 1`+
			` and on(node_guid, port, remote_node_guid, remote_port) max_over_time(ibtracer_link_xmit_wait_ratio[1m]) > 0`)
		return err == nil && n == 1
	}) {
		t.Fatalf("no congestion series for sw2[1] after %d steps: %v\n%s", step, err, fab.Output())
	}
}
