package service

import (
	"errors"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
)

// losingTransport is a device that can be pulled out (as umad's EIO).
type losingTransport struct {
	*madtest.Transport
	lost chan struct{}
}

func (l *losingTransport) Recv(p *ibmad.Packet) error {
	select {
	case <-l.lost:
		return ibmad.ErrDeviceLost
	default:
	}
	ch := make(chan error, 1)
	go func() { ch <- l.Transport.Recv(p) }()
	select {
	case err := <-ch:
		return err
	case <-l.lost:
		return ibmad.ErrDeviceLost
	}
}

// TestDeviceLossReopens: a lost device is device_up 0 until it can be
// opened again; the service keeps trying, however often opening fails.
func TestDeviceLossReopens(t *testing.T) {
	var mu sync.Mutex
	opens, failNext := 0, 0
	var current *losingTransport
	cfgFile := filepath.Join(t.TempDir(), "ibtracer.yml")
	writeConfig(t, cfgFile, "interval: 1s\n")
	s, err := New(Options{ConfigFile: cfgFile, HostAgent: true, RetryInterval: 50 * time.Millisecond,
		Open: func(bool) (*ibopen.Opened, error) {
			mu.Lock()
			defer mu.Unlock()
			opens++
			if failNext > 0 {
				failNext--
				return nil, syscall.ENODEV
			}
			current = &losingTransport{Transport: madtest.New(madtest.Echo), lost: make(chan struct{})}
			return &ibopen.Opened{Transport: current}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	reg := runService(t, s)
	up := func() float64 { return metric(t, reg, "ibtracer_device_up", nil) }
	waitFor(t, 10*time.Second, "device_up 1", func() bool { return up() == 1 })
	first := s.Engine()

	mu.Lock()
	failNext = 3
	close(current.lost)
	mu.Unlock()
	waitFor(t, 10*time.Second, "device_up 0 after the loss", func() bool { return up() == 0 })
	if err := first.Err(); !errors.Is(err, ibmad.ErrDeviceLost) {
		t.Fatalf("the lost engine says %v", err)
	}
	waitFor(t, 20*time.Second, "device_up 1 after three failed opens", func() bool { return up() == 1 })
	mu.Lock()
	n := opens
	mu.Unlock()
	if n != 5 || s.Engine() == first {
		t.Fatalf("%d opens (want 1 + 3 failed + 1), same engine %v", n, s.Engine() == first)
	}
	if v := metric(t, reg, "ibtracer_device_losses_total", nil); v != 1 {
		t.Fatalf("device_losses_total %v", v)
	}
}
