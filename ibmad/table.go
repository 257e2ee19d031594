package ibmad

import (
	"context"
	"errors"
	"fmt"
	"time"
)

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
	if err := e.Err(); err != nil {
		return nil, err
	}
	target := targetOf(req)
	ts, err := e.window.acquire(ctx, target)
	if err != nil {
		return nil, err
	}
	defer e.window.release(target, ts, true)
	e.stats.outstanding.Add(1)
	defer e.stats.outstanding.Add(-1)

	// A transport whose kernel does RMPP has ACKed every segment already.
	kr, _ := e.t.(interface{ ReassemblesRMPP() bool })
	t := &tableCall{e: e, ctx: ctx, req: req, class: class, cs: e.stats.class(class), target: target,
		// done receives failAll's token (device lost, engine closed).
		c:       &call{stream: make(chan *Packet, streamDepth), done: make(chan struct{}, 1), class: class, want: tableWant(req)},
		rx:      newRMPPReceiver(tr.Window, tr.MaxBytes),
		timer:   time.NewTimer(timeout),
		timeout: timeout, retries: retries, kernelRMPP: kr != nil && kr.ReassemblesRMPP()}
	defer e.pending.unmap(t.c)
	defer t.timer.Stop()
	if err := t.send(); err != nil {
		return nil, err
	}
	return t.run()
}

// tableCall is one GetTable in progress: the request, its TIDs' call, the
// receiver, and the counts of attempts and of ACK prompts.
type tableCall struct {
	e          *Engine
	ctx        context.Context
	req        *Request
	class      MgmtClass
	cs         *classCounters
	target     uint64
	c          *call
	rx         *rmppReceiver
	timer      *time.Timer // one timeout of silence
	timeout    time.Duration
	retries    int
	kernelRMPP bool // the transport's kernel ACKs the segments

	streamTID uint32 // the attempt whose answer is being reassembled
	prompts   int    // ACKs repeated since the last new segment
	attempt   int    // requests sent before the first segment, less one
	lastSeg   MAD    // the segment the last ACK answered
}

// run waits for the table's segments until it is complete or fails.
func (t *tableCall) run() (*Table, error) {
	for {
		select {
		case <-t.ctx.Done():
			return nil, t.ctx.Err()
		case <-t.c.done:
			return nil, t.e.pending.errOf(t.c)
		case <-t.timer.C:
			if err := t.silence(); err != nil {
				return nil, err
			}
		case p := <-t.c.stream:
			if tbl, end, err := t.segment(p); end {
				return tbl, err
			}
		}
	}
}

// send sends one attempt of the request, under the MAD budget.
func (t *tableCall) send() error {
	e, req := t.e, t.req
	if err := e.budget.wait(t.ctx, t.target, e.done); err != nil { // the MAD budget counts tables too
		return err
	}
	t.cs.requests.Add(1)
	tid, err := e.pending.mapAttempt(t.c)
	if err != nil {
		return err
	}
	pkt := Packet{Addr: req.Addr, MAD: req.MAD, TimeoutMS: uint32(t.timeout / time.Millisecond)}
	if pkt.TimeoutMS == 0 {
		pkt.TimeoutMS = 1
	}
	pkt.MAD.SetMethod(MethodGetTable)
	if pkt.MAD[24] == 0 {
		pkt.MAD[24] = 1 // RMPPVersion
	}
	pkt.MAD.SetTID(uint64(tid))
	if err := e.t.Send(&pkt); err != nil {
		t.cs.sendErrors.Add(1)
		if errors.Is(err, ErrClosed) {
			return err
		}
		switch classifySend(err) {
		case sendGone:
			return e.lostBySend(err)
		case sendAgain:
			// Refused for now: the timer's silence sends it again, at
			// the cost of one of its retries, as Do does.
			t.timer.Reset(t.timeout)
			return nil
		}
		// Refused: the table request fails alone.
		return refusedErr(req.MAD.MgmtClass(), &req.MAD, req.Addr, err)
	}
	t.timer.Reset(t.timeout)
	return nil
}

// ackTo sends the ACK a owes for segment seg (none when the kernel does
// RMPP).
func (t *tableCall) ackTo(seg *MAD, a rmppAck) {
	if !a.send || t.kernelRMPP {
		return
	}
	p := Packet{Addr: t.req.Addr, MAD: *seg}
	p.MAD.SetMethod(seg.Method() &^ MethodResponseBit)
	p.MAD.SetStatus(0)
	h := RMPPHeader{Version: 1, Type: RMPPTypeAck, Flags: RMPPFlagActive, Data1: a.seg, Data2: a.newWin}
	h.marshalTo(p.MAD[:])
	clear(p.MAD[SADataOffset:])
	if err := t.e.t.Send(&p); err != nil {
		t.cs.sendErrors.Add(1)
		return
	}
	t.cs.acks.Add(1)
}

// silence handles one timeout without a new segment: before the first
// segment the request is sent again, after it the last ACK is repeated;
// each at most req.Retries times.
func (t *tableCall) silence() error {
	if t.rx.started() {
		if t.prompts >= t.retries {
			t.cs.timeouts.Add(1)
			return fmt.Errorf("%w: SA %s stream from %s stopped after segment %d: %w after %v",
				ErrRMPP, t.req.MAD.AttrID().name(t.class), t.req.Addr, t.rx.next-1, ErrTimeout, t.timeout)
		}
		t.prompts++
		t.cs.retries.Add(1) // a prompt is the stream's retry
		t.ackTo(&t.lastSeg, t.rx.prompt())
		t.timer.Reset(t.timeout)
		return nil
	}
	t.cs.timeouts.Add(1)
	if t.attempt >= t.retries {
		return fmt.Errorf("%s GetTable %s to %s: %d attempts: %w after %v",
			t.class, t.req.MAD.AttrID().name(t.class), t.req.Addr, t.attempt+1, ErrTimeout, t.timeout)
	}
	t.attempt++
	t.cs.retries.Add(1)
	return t.send()
}

// segment feeds one answer of the stream to the receiver and ACKs it;
// end reports the table complete (or failed) with its result.
func (t *tableCall) segment(p *Packet) (tbl *Table, end bool, err error) {
	if p.TimedOut {
		return nil, false, nil // the transport gave up on an attempt: the timer decides
	}
	tid := p.MAD.TIDLow()
	if t.streamTID == 0 {
		t.streamTID = tid
	} else if tid != t.streamTID {
		t.e.stats.drops[DropLate].Add(1) // an earlier attempt's answer
		return nil, false, nil
	}
	before := t.rx.next
	ack, done, err := t.rx.feed(&p.MAD, p.RMPPTail, p.Len)
	t.lastSeg = p.MAD
	t.ackTo(&t.lastSeg, ack)
	if done || err != nil {
		tbl, err := t.result(err)
		return tbl, true, err
	}
	if t.rx.next != before {
		t.prompts = 0
		t.timer.Reset(t.timeout)
	}
	return nil, false, nil
}

// result is the table and error GetTable returns once the receiver is
// done or failed with err: the records along with a *StatusError or
// ErrTableTruncated, none with any other error.
func (t *tableCall) result(err error) (*Table, error) {
	tbl := t.rx.table
	if err != nil && !errors.Is(err, ErrTableTruncated) {
		var se *StatusError
		if errors.As(err, &se) {
			return &tbl, err
		}
		return nil, fmt.Errorf("SA %s table from %s: %w", t.req.MAD.AttrID().name(t.class), t.req.Addr, err)
	}
	return &tbl, err
}

// tableWant is what each segment of req's table must carry: the answer
// to a GetTable (send sets the method).
func tableWant(req *Request) expected {
	m := req.MAD
	m.SetMethod(MethodGetTable)
	return expect(&m, &req.Addr, req.DestLMC)
}

// GetTable errors.
var (
	// ErrRMPP means an RMPP stream was malformed or stopped: bad segment
	// numbers, a missing First or Last flag, an ABORT or STOP from the
	// sender, or no further segment within the timeout.
	ErrRMPP = errors.New("ibmad: RMPP")
	// ErrTableTruncated means the SA's answer holds only the records of
	// its first MAD: the sender's MAD layer did not segment the message
	// (ibsim's libumad2sim cuts every MAD to 256 bytes; docs/protocol.md).
	// GetTable returns the whole records it got alongside this error.
	ErrTableTruncated = errors.New("ibmad: SA table truncated to its first MAD")
	// ErrAnswerTooLong means the answer was longer than the transport
	// takes (DefaultMaxTableBytes over umad): it was read out and dropped,
	// and its request failed at once (docs/protocol.md, "Receiving").
	ErrAnswerTooLong = errors.New("ibmad: answer too long")
)

// Table is a reassembled SA GetTable answer.
type Table struct {
	AttrID     AttrID
	Status     Status
	RecordSize int    // AttributeOffset * 8
	Data       []byte // Len() records of RecordSize bytes
	Segments   int    // MADs the answer came in (1 when reassembled by the kernel)
}

// Len returns the number of records.
func (t *Table) Len() int {
	if t == nil || t.RecordSize == 0 {
		return 0
	}
	return len(t.Data) / t.RecordSize
}

// Record returns record i (0 <= i < Len()).
func (t *Table) Record(i int) []byte { return t.Data[i*t.RecordSize : (i+1)*t.RecordSize] }
