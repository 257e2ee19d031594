package service

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
)

// TestIbsimRestartIsDeviceLoss: ibsim killed under a running service is
// device loss (device_up 0), not a routing verdict; started again under
// the same socket name, the service reconnects by itself and traces
// succeed again.
func TestIbsimRestartIsDeviceLoss(t *testing.T) {
	fab := ibsimtest.Start(t, filepath.Join("..", "..", "testdata", "topologies", "two-switch.net"), ibsimtest.Options{})
	p, err := fab.Dial("host2", false).Port()
	if err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(t.TempDir(), "ibtracer.yml")
	writeConfig(t, cfgFile, fmt.Sprintf("interval: 1s\ntimeout: 200ms\ndestinations:\n  - name: h2\n    lid: %d\n", p.LID))
	s, err := New(Options{ConfigFile: cfgFile, HostAgent: true, RetryInterval: 200 * time.Millisecond,
		Open: func(accept bool) (*ibopen.Opened, error) {
			tr, err := ibsim.Dial(fab.Options("host1", accept))
			if err != nil {
				return nil, err
			}
			return &ibopen.Opened{Transport: tr, Node: tr.NodeName()}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	reg := runService(t, s)

	up := func() float64 { return metric(t, reg, "ibtracer_device_up", nil) }
	success := func() float64 {
		return metric(t, reg, "ibtracer_trace_success", map[string]string{"dest": "h2"})
	}
	lastTrace := func() float64 {
		return metric(t, reg, "ibtracer_last_trace_timestamp_seconds", map[string]string{"dest": "h2"})
	}
	waitFor(t, 30*time.Second, "device_up 1 and a successful trace", func() bool { return up() == 1 && success() == 1 })

	killed := time.Now()
	fab.Kill()
	waitFor(t, 20*time.Second, "device_up 0 after ibsim was killed", func() bool { return up() == 0 })
	t.Logf("device_up 0 %v after the kill", time.Since(killed).Round(time.Millisecond))
	if f := metric(t, reg, "ibtracer_trace_failures_total", map[string]string{"dest": "h2", "reason": "no_route"}); f > 0 {
		t.Errorf("a dead ibsim was counted as %v no_route failures", f)
	}

	fab.Restart()
	restartedAt := time.Now()
	restarted := float64(restartedAt.Unix())
	waitFor(t, 60*time.Second, "device_up 1 and a successful trace after ibsim restarted", func() bool {
		return up() == 1 && success() == 1 && lastTrace() > restarted
	})
	t.Logf("device_up 1 and a successful trace %v after the restart; device_losses_total %v",
		time.Since(restartedAt).Round(time.Millisecond), metric(t, reg, "ibtracer_device_losses_total", nil))
	if n := metric(t, reg, "ibtracer_device_losses_total", nil); n < 1 {
		t.Errorf("device_losses_total %v after a kill", n)
	}
	if f := metric(t, reg, "ibtracer_trace_failures_total", map[string]string{"dest": "h2", "reason": "no_route"}); f > 0 {
		t.Errorf("the ibsim restart was counted as %v no_route failures", f)
	}
}
