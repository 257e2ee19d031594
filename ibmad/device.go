package ibmad

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// The device under an engine: its port's attributes, kept fresh off the
// receive path, its loss, and what a failed send says about it.

// DefaultPortRefresh is Options.PortRefresh's default, and PortFresh
// the age past which Port reads the transport again.
const (
	DefaultPortRefresh = 10 * time.Second
	PortFresh          = time.Second
)

// portCopy is the port's attributes as last read, and when.
type portCopy struct {
	attrs PortAttributes
	at    time.Time
}

// fresh says whether c is at most PortFresh old (and the background
// refresh's period, when that is shorter).
func (e *Engine) fresh(c *portCopy) bool {
	return c != nil && time.Since(c.at) < min(PortFresh, e.opts.PortRefresh)
}

// Port returns the local port's attributes. It returns the copy last read
// while it is at most PortFresh old (the background refresh reads one
// every Options.PortRefresh), without waiting; an older copy, or none,
// is read from the transport (a sysfs read for umad, a control round
// trip for ibsim), at most once for all the callers that find it old: a
// caller looks again under the port lock, and if another stored a fresh
// copy meanwhile, that is the answer (docs/architecture.md, "The life of
// a trace").
func (e *Engine) Port() (PortAttributes, error) {
	if p := e.port.Load(); e.fresh(p) {
		return p.attrs, nil
	}
	beforePortLock()
	e.portMu.Lock()
	defer e.portMu.Unlock()
	if p := e.port.Load(); e.fresh(p) {
		return p.attrs, nil
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
		return p.attrs, true
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
			return old.attrs, nil
		}
		return p, err
	}
	e.port.Store(&portCopy{attrs: p, at: time.Now()})
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
		e.pending.failAll(err)
	})
}

// deviceErr makes a transport error a device failure, keeping the cause.
func deviceErr(op string, err error) error {
	if errors.Is(err, ErrDeviceLost) {
		return err
	}
	return fmt.Errorf("%w: %s: %w", ErrDeviceLost, op, err)
}

// What a failed send means (docs/protocol.md, "Send errors"): the kernel
// refuses one request far more often than it loses the device, and only a
// device that is gone may reset the engine.
type sendFault int

const (
	// sendRefused: this request cannot be sent (an address the kernel
	// cannot use, a class the port does not support). It fails alone.
	sendRefused sendFault = iota
	// sendGone: the device is gone; the engine is lost.
	sendGone
	// sendAgain: the kernel had no room or was interrupted; the attempt
	// is repeated.
	sendAgain
)

// ErrTryAgain marks a send the transport could not make for now (no
// memory, interrupted): the engine spends an attempt on it and retries.
var ErrTryAgain = errors.New("ibmad: try again")

// classifySend sorts a transport's send error. Transports say what they
// know by wrapping ErrDeviceLost, ErrRequestRefused or ErrTryAgain; a bare
// errno is sorted as the umad transport sorts it; anything else is
// refused: one request's failure never passes for a lost device.
func classifySend(err error) sendFault {
	switch {
	case errors.Is(err, ErrDeviceLost):
		return sendGone
	case errors.Is(err, ErrRequestRefused):
		return sendRefused
	case errors.Is(err, ErrTryAgain):
		return sendAgain
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.EIO, syscall.ENODEV, syscall.ENXIO, syscall.EPIPE:
			return sendGone
		case syscall.EAGAIN, syscall.EINTR, syscall.ENOMEM, syscall.ENOBUFS, syscall.EBUSY:
			return sendAgain
		}
	}
	return sendRefused
}

// refusedErr is a refused request's error: what was sent, where (the
// address with its GRH), and why, wrapping ErrRequestRefused and the cause.
func refusedErr(class MgmtClass, m *MAD, addr Address, err error) error {
	if !errors.Is(err, ErrRequestRefused) {
		err = fmt.Errorf("%w: %w", ErrRequestRefused, err)
	}
	return fmt.Errorf("%s %s to %s: %w", class, m.AttrID().name(class), addr, err)
}

// lostBySend marks the engine lost by a send that found the device gone:
// a device failure, not a routing verdict, and no retry against it.
func (e *Engine) lostBySend(err error) error {
	err = deviceErr("send", err)
	e.markLost(err)
	return err
}

// sendFailed handles a request's failed send: it returns the error that
// ends the request, or nil when the attempt is to be repeated (after a
// short pause, so that a kernel out of memory is not hammered).
func (e *Engine) sendFailed(ctx context.Context, req *Request, class MgmtClass, timeout time.Duration, err error) error {
	if errors.Is(err, ErrClosed) {
		return err
	}
	switch classifySend(err) {
	case sendGone:
		return e.lostBySend(err)
	case sendAgain:
		pause := min(timeout, 20*time.Millisecond)
		select {
		case <-time.After(pause):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-e.done:
			return ErrClosed
		}
	}
	return refusedErr(class, &req.MAD, req.Addr, err)
}
