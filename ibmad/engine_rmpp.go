package ibmad

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// streamDepth is how many segments a GetTable buffers between the receive
// goroutine and its waiter; more (a sender ignoring the window) are
// dropped as late and recovered by the ACK prompt.
const streamDepth = 256

// toStream hands a copy of pkt to a GetTable waiter without blocking. The
// caller holds e.mu, so c is still mapped and its channel open.
func (e *Engine) toStream(c *call, pkt *Packet) {
	p := new(Packet)
	*p = *pkt
	select {
	case c.stream <- p:
		e.stats.delivered.Add(1)
	default:
		e.stats.drops[DropLate].Add(1)
	}
}

// TableRequest tunes a GetTable; the zero value takes the defaults.
type TableRequest struct {
	// Window is the receive window granted to the sender, in segments.
	Window uint32
	// MaxBytes bounds the reassembled records.
	MaxBytes int
}

// A Transport whose kernel reassembles RMPP messages (umad with the SA
// agent at RMPP version 1) says so with a ReassemblesRMPP() bool method;
// GetTable then sends no ACKs.

// GetTable sends an SA GetTable request (req.MAD's method is set to
// GetTable) and reassembles the RMPP answer (docs/protocol.md, "RMPP").
// The request is retried like Do's until the first segment arrives; after
// that each silence of one timeout repeats the last ACK, at most
// req.Retries times, before the stream is given up with an error wrapping
// ErrRMPP and ErrTimeout. A non-zero status is returned as a
// *StatusError with the table header. A message the sender never
// segmented (ibsim) yields its first MAD's records and ErrTableTruncated.
func (e *Engine) GetTable(ctx context.Context, req *Request, tr TableRequest) (*Table, error) {
	timeout, retries := e.attempts(req)
	class := req.MAD.MgmtClass()
	if class != ClassSubnAdm {
		return nil, fmt.Errorf("GetTable of class %s: %w", class, ErrInvalid)
	}
	cs := e.stats.class(class)
	if err := e.Err(); err != nil {
		return nil, err
	}
	target := targetOf(req)
	ts, err := e.acquire(ctx, target)
	if err != nil {
		return nil, err
	}
	defer e.release(target, ts, true)
	e.stats.outstanding.Add(1)
	defer e.stats.outstanding.Add(-1)

	// done receives failAll's token (device lost, engine closed).
	c := &call{stream: make(chan *Packet, streamDepth), done: make(chan struct{}, 1), class: class}
	defer e.unmapStream(c)
	rx := newRMPPReceiver(tr.Window, tr.MaxBytes)
	timer := time.NewTimer(timeout)
	defer timer.Stop()

	var (
		streamTID uint32 // the attempt whose answer is being reassembled
		prompts   int
		attempt   int
		lastErr   error
	)
	send := func() error {
		if err := e.budgetWait(ctx, target); err != nil { // the MAD budget counts tables too
			return err
		}
		cs.requests.Add(1)
		tid, err := e.mapAttempt(c)
		if err != nil {
			return err
		}
		pkt := Packet{Addr: req.Addr, MAD: req.MAD, TimeoutMS: uint32(timeout / time.Millisecond)}
		if pkt.TimeoutMS == 0 {
			pkt.TimeoutMS = 1
		}
		pkt.MAD.SetMethod(MethodGetTable)
		if pkt.MAD[24] == 0 {
			pkt.MAD[24] = 1 // RMPPVersion
		}
		pkt.MAD.SetTID(uint64(tid))
		if err := e.t.Send(&pkt); err != nil {
			cs.sendErrors.Add(1)
			if errors.Is(err, ErrClosed) {
				return err
			}
			err = deviceErr("send", err)
			e.markLost(err)
			return err
		}
		timer.Reset(timeout)
		return nil
	}
	// A transport whose kernel does RMPP has ACKed every segment already.
	kr, _ := e.t.(interface{ ReassemblesRMPP() bool })
	kernelRMPP := kr != nil && kr.ReassemblesRMPP()
	ackTo := func(seg *MAD, a rmppAck) {
		if !a.send || kernelRMPP {
			return
		}
		p := Packet{Addr: req.Addr, MAD: *seg}
		p.MAD.SetMethod(seg.Method() &^ MethodResponseBit)
		p.MAD.SetStatus(0)
		h := RMPPHeader{Version: 1, Type: RMPPTypeAck, Flags: RMPPFlagActive, Data1: a.seg, Data2: a.newWin}
		h.marshalTo(p.MAD[:])
		clear(p.MAD[SADataOffset:])
		if err := e.t.Send(&p); err != nil {
			cs.sendErrors.Add(1)
		}
	}
	var lastSeg MAD
	if err := send(); err != nil {
		return nil, err
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.done:
			e.mu.Lock()
			err := c.err
			e.mu.Unlock()
			return nil, err
		case <-timer.C:
			if rx.started() {
				if prompts >= retries {
					cs.timeouts.Add(1)
					return nil, fmt.Errorf("%w: SA %s stream from %s stopped after segment %d: %w after %v",
						ErrRMPP, req.MAD.AttrID().name(class), req.Addr, rx.next-1, ErrTimeout, timeout)
				}
				prompts++
				cs.retries.Add(1) // a prompt is the stream's retry
				ackTo(&lastSeg, rx.prompt())
				timer.Reset(timeout)
				continue
			}
			cs.timeouts.Add(1)
			lastErr = fmt.Errorf("%w after %v", ErrTimeout, timeout)
			if attempt >= retries {
				return nil, fmt.Errorf("%s GetTable %s to %s: %d attempts: %w", class, req.MAD.AttrID().name(class), req.Addr, attempt+1, lastErr)
			}
			attempt++
			cs.retries.Add(1)
			if err := send(); err != nil {
				return nil, err
			}
		case p := <-c.stream:
			if p.TimedOut {
				// The transport gave up on an attempt: the timer decides.
				continue
			}
			tid := p.MAD.TIDLow()
			if streamTID == 0 {
				streamTID = tid
			} else if tid != streamTID {
				e.stats.drops[DropLate].Add(1) // an earlier attempt's answer
				continue
			}
			before := rx.next
			ack, done, err := rx.feed(&p.MAD, p.RMPPTail, p.Len)
			lastSeg = p.MAD
			ackTo(&lastSeg, ack)
			if done || err != nil {
				t := rx.table
				if err != nil && !errors.Is(err, ErrTableTruncated) {
					var se *StatusError
					if errors.As(err, &se) {
						return &t, err
					}
					return nil, fmt.Errorf("SA %s table from %s: %w", req.MAD.AttrID().name(class), req.Addr, err)
				}
				return &t, err
			}
			if rx.next != before {
				prompts = 0
				timer.Reset(timeout)
			}
		}
	}
}

// unmapStream removes a GetTable's TIDs; later segments count as unknown.
func (e *Engine) unmapStream(c *call) {
	e.mu.Lock()
	for _, t := range c.tids {
		if e.pending[t] == c {
			delete(e.pending, t)
		}
	}
	e.mu.Unlock()
}
