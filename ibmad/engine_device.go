package ibmad

import (
	"errors"
	"fmt"
	"time"
)

// Port returns the local port's attributes. Once read, it returns the
// copy the background refresh keeps (at most Options.PortRefresh old plus
// one transport read) without waiting; only the very first call may wait
// for the transport (a sysfs read for umad, a control round trip for ibsim).
// A caller that finds no copy looks again under the port lock: if the
// background refresh stored one meanwhile, that is the answer, and the
// transport is not read twice (docs/architecture.md, "The life of a trace").
func (e *Engine) Port() (PortAttributes, error) {
	if p := e.port.Load(); p != nil {
		return *p, nil
	}
	beforePortLock()
	e.portMu.Lock()
	defer e.portMu.Unlock()
	if p := e.port.Load(); p != nil {
		return *p, nil
	}
	return e.readPortLocked()
}

// beforePortLock runs in Port between the unlocked look at the cache and
// taking portMu. It does nothing; a test sets it (export_test.go) to make
// another reader finish in that gap.
var beforePortLock = func() {}

// CachedPort returns the last port attributes read, and false when none
// was read yet. It never touches the transport: handlers use it.
func (e *Engine) CachedPort() (PortAttributes, bool) {
	if p := e.port.Load(); p != nil {
		return *p, true
	}
	return PortAttributes{}, false
}

// readPort asks the transport. After a failed read the last good answer
// stays; a failure wrapping ErrDeviceLost marks the engine lost.
func (e *Engine) readPort() (PortAttributes, error) {
	e.portMu.Lock()
	defer e.portMu.Unlock()
	return e.readPortLocked()
}

// readPortLocked is readPort with portMu held.
func (e *Engine) readPortLocked() (PortAttributes, error) {
	p, err := e.t.Port()
	if err != nil {
		if errors.Is(err, ErrDeviceLost) {
			e.markLost(err)
		}
		if old := e.port.Load(); old != nil {
			return *old, nil
		}
		return p, err
	}
	e.port.Store(&p)
	return p, nil
}

// portLoop refreshes the cached port off the receive path; an SM sweep
// can change the LID. It doubles as the health probe of an idle device.
func (e *Engine) portLoop() {
	t := time.NewTicker(e.opts.PortRefresh)
	defer t.Stop()
	for {
		_, _ = e.readPort()
		select {
		case <-e.done:
			return
		case <-t.C:
		}
	}
}

// Lost is closed when the device is lost (see Engine).
func (e *Engine) Lost() <-chan struct{} { return e.lost }

// Err returns why the engine is lost, or nil.
func (e *Engine) Err() error {
	if p := e.lostErr.Load(); p != nil {
		return *p
	}
	return nil
}

func (e *Engine) markLost(err error) {
	e.lostOnce.Do(func() {
		e.lostErr.Store(&err)
		close(e.lost)
		e.failAll(err)
	})
}

// deviceErr makes a transport error a device failure, keeping the cause.
func deviceErr(op string, err error) error {
	if errors.Is(err, ErrDeviceLost) {
		return err
	}
	return fmt.Errorf("%w: %s: %w", ErrDeviceLost, op, err)
}

// localLMC is the cached local port's LMC, 0 before the first read.
func (e *Engine) localLMC() uint8 {
	if p := e.port.Load(); p != nil {
		return p.LMC
	}
	return 0
}
