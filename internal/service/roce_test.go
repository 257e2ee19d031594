package service

import (
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
	"github.com/ibtracer/ibtracer_exporter/internal/syncbuf"
)

// TestRoCEPortSaysSoOnce: an exporter on a machine whose only port is
// RoCE (a sysfs fixture, through the real umad port choice) says so once
// at error level naming the port, retries slowly and quietly, and its
// metrics say why it has no device. The run lasts 30 retry intervals (30 s
// with a 1 s interval): at most 2 error-level lines.
func TestRoCEPortSaysSoOnce(t *testing.T) {
	cfgFile := filepath.Join(t.TempDir(), "ibtracer.yml")
	writeConfig(t, cfgFile, "interval: 1s\njitter_seed: roce\ndestinations:\n  - {name: x, lid: 3}\n")
	var logs syncbuf.Buffer
	var opens atomic.Int32
	ib := ibopen.Config{Transport: "umad", Sysfs: "../../ibmad/umad/testdata/sysfs/roce-only"}
	const interval = 40 * time.Millisecond
	s, err := New(Options{ConfigFile: cfgFile, Logger: log.NewLogfmtLogger(&logs), IB: ib, RetryInterval: interval,
		Open: func(accept bool) (*ibopen.Opened, error) {
			opens.Add(1)
			return ib.Open(accept)
		}})
	if err != nil {
		t.Fatal(err)
	}
	reg := runService(t, s)
	time.Sleep(30 * interval)
	var errs []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "level=error") {
			errs = append(errs, l)
		}
	}
	if len(errs) > 2 || len(errs) == 0 {
		t.Errorf("%d error-level lines in 30 retry intervals, want 1 or 2:\n%s", len(errs), strings.Join(errs, "\n"))
	}
	if len(errs) > 0 && (!strings.Contains(errs[0], "mlx5_0 port 1 is RoCE") || !strings.Contains(errs[0], "needs an InfiniBand port")) {
		t.Errorf("the message does not name the RoCE port and what is needed: %s", errs[0])
	}
	// Doubling from 1 s to the interval would try about 30 times; the slow
	// retry of a permanent condition a handful.
	if n := opens.Load(); n > 8 {
		t.Errorf("%d attempts to open in 30 retry intervals: not a slow retry", n)
	}
	want := `
# HELP ibtracer_device_up 1 when the InfiniBand device (or simulator) is open.
# TYPE ibtracer_device_up gauge
ibtracer_device_up 0
# HELP ibtracer_device_down_reason Why no InfiniBand device is open (1 for the reason, only while device_up is 0): roce_port (the only ports are RoCE), permission, missing (no device, driver or ib_umad), lost, error.
# TYPE ibtracer_device_down_reason gauge
ibtracer_device_down_reason{reason="roce_port"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ibtracer_device_up", "ibtracer_device_down_reason"); err != nil {
		t.Error(err)
	}
}
