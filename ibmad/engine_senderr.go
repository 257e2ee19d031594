package ibmad

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

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

// replyWorkers send the agents' replies off the receive goroutine: the
// kernel's write can block while it resolves an address (about a second
// was seen on a RoCE port), and the receive goroutine must keep delivering
// the answers other requests wait for. Several workers, so that one
// reply that blocks does not hold up the others; a requester with as many
// replies queued as there are workers, each blocking, still can, and a
// full queue drops (counted).
const (
	replyWorkers = 4
	replyQueue   = 256
)

// reply queues a handler's reply; with the queue full it is dropped and
// counted (the requester retries).
func (e *Engine) reply(resp *Packet) {
	p := e.packets.Get().(*Packet)
	*p = *resp
	select {
	case e.replies <- p:
	default:
		e.packets.Put(p)
		e.stats.drops[DropSendFailed].Add(1)
	}
}

func (e *Engine) replyLoop() {
	for {
		select {
		case <-e.done:
			return
		case p := <-e.replies:
			e.sendReply(p)
			e.packets.Put(p)
		}
	}
}

// sendReply sends one reply. A refused reply is dropped and counted; only
// a device that is gone marks the engine lost.
func (e *Engine) sendReply(p *Packet) {
	if err := e.t.Send(p); err != nil {
		e.stats.drops[DropSendFailed].Add(1)
		if !errors.Is(err, ErrClosed) && classifySend(err) == sendGone {
			e.markLost(deviceErr("send", err))
		}
		return
	}
	e.stats.handled.Add(1)
	e.stats.responses.Add(1)
}
