package ibmad

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"time"
)

// The requests waiting for an answer, and which answer is whose.
//
// Every attempt of a request gets its own TID, drawn at random, and maps
// it to the request's call; earlier attempts stay mapped, so a late answer
// to any of them still completes the request. An answer is found by the
// low 32 bits of its TID (the kernel owns the upper 32 bits and ibsim
// rewrites the top 16; docs/architecture.md).

// What completed a call, set under the table's lock before the token is
// sent on call.done.
const (
	resultNone = iota
	resultResponse
	resultTimeoutReport
	resultError
)

// call is one request in flight: Do's, or a GetTable's stream. Each
// request has its own, dropped when it returns: a token still on done
// then goes with it.
type call struct {
	done    chan struct{}
	class   MgmtClass
	want    expected // what an answer must carry
	tids    []uint32
	tidBuf  [4]uint32 // tids' first array: a request and its default retries
	current uint32
	result  int
	err     error
	resp    *Response
	sent    time.Time
	// stream, for a GetTable (table.go), receives every response
	// and timeout report of the call's TIDs instead of resp.
	stream chan *Packet
}

// pendingTable maps the TIDs of the attempts in flight to their calls.
// A token is sent on a call's done only under mu, only while the call is
// mapped and only when no result is set (result goes back to resultNone
// after the waiter took the token: rearm), so done, of capacity 1, never
// blocks the receive goroutine.
type pendingTable struct {
	mu     sync.Mutex
	calls  map[uint32]*call
	closed bool // no attempt is mapped any more (Engine.Close)
}

func (p *pendingTable) init() { p.calls = make(map[uint32]*call) }

// newCall is the call of one request of class whose answer must match
// want, delivered into resp.
func newCall(class MgmtClass, want expected, resp *Response) *call {
	c := &call{done: make(chan struct{}, 1), class: class, want: want, resp: resp}
	c.tids = c.tidBuf[:0]
	return c
}

// unmap removes c's TIDs: answers to them that come later count as
// unknown.
func (p *pendingTable) unmap(c *call) {
	p.mu.Lock()
	p.unmapLocked(c)
	p.mu.Unlock()
}

func (p *pendingTable) unmapLocked(c *call) {
	for _, t := range c.tids {
		if p.calls[t] == c {
			delete(p.calls, t)
		}
	}
}

// mapAttempt gives one attempt of c a fresh TID and maps it to c; earlier
// attempts stay mapped, so a late answer to any of them still counts.
func (p *pendingTable) mapAttempt(c *call) (uint32, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, ErrClosed
	}
	tid := p.nextTID()
	p.calls[tid] = c
	c.tids = append(c.tids, tid)
	c.current = tid
	return tid, nil
}

// nextTID draws the low 32 bits of a TID at random (the kernel owns the
// high 32: docs/protocol.md). A counter let any node the engine asked
// guess the next ones and answer them first; a draw from the runtime's
// ChaCha8 generator cannot be guessed from the ones seen. The kernel
// refuses a second outstanding request with the TID and class of one
// still outstanding: a TID mapped here (every attempt of a request
// still waiting) is drawn again, and 0 is never used. Called with p.mu
// held.
func (p *pendingTable) nextTID() uint32 {
	for {
		t := rand.Uint32()
		if t == 0 {
			continue
		}
		if _, busy := p.calls[t]; !busy {
			return t
		}
	}
}

// expire ends c's current attempt when its timer fires, and reports
// false when an answer, a timeout report or an error beat the timer (its
// token is then on the way). The attempt's TID stays mapped: a late
// response still completes the call.
func (p *pendingTable) expire(c *call) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.result != resultNone {
		return false
	}
	c.current = 0
	return true
}

// rearm readies c for its next attempt after a timeout report.
func (p *pendingTable) rearm(c *call) {
	p.mu.Lock()
	c.result, c.current = resultNone, 0
	p.mu.Unlock()
}

// errOf is the error failAll gave c.
func (p *pendingTable) errOf(c *call) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return c.err
}

// refuse fails, with err, the call pkt answers (what its TID and
// expected.match say), if it is still waiting: an answer the transport
// could not take (DropError.Packet).
func (p *pendingTable) refuse(pkt *Packet, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.calls[pkt.MAD.TIDLow()]
	if c == nil || c.class != pkt.MAD.MgmtClass() || c.result != resultNone {
		return
	}
	if _, ok := c.want.match(pkt); !ok {
		return
	}
	for _, t := range c.tids {
		delete(p.calls, t)
	}
	c.result, c.err = resultError, err
	c.done <- struct{}{}
}

// failAll unmaps every call and completes those still waiting with err.
func (p *pendingTable) failAll(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := map[*call]bool{}
	for t, c := range p.calls {
		delete(p.calls, t)
		if seen[c] {
			continue
		}
		seen[c] = true
		if c.result == resultNone {
			c.result, c.err = resultError, err
			c.done <- struct{}{}
		}
	}
}

// shut refuses every later attempt; it reports false when the table
// was shut already.
func (p *pendingTable) shut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.closed = true
	return true
}

// timeoutReport hands the transport's report that an attempt got no
// answer to the call waiting for that attempt. It reports whether the
// report was delivered; one that no attempt waits for (an earlier
// attempt's, or not ours) is dropped as DropUnknownTID.
func (p *pendingTable) timeoutReport(pkt *Packet) (DropReason, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	tid := pkt.MAD.TIDLow()
	c := p.calls[tid]
	switch {
	case c != nil && c.stream != nil:
		return c.toStream(pkt)
	case c != nil && c.current == tid && c.result == resultNone:
		c.result = resultTimeoutReport
		c.done <- struct{}{}
		return 0, true
	}
	return DropUnknownTID, false
}

// answer hands a response to the call whose TID it carries, if it
// answers exactly what that call asked (expected.match). It reports
// whether the answer was delivered, and if not, why it is dropped.
func (p *pendingTable) answer(pkt *Packet) (DropReason, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.calls[pkt.MAD.TIDLow()]
	if c == nil || c.class != pkt.MAD.MgmtClass() {
		return DropUnknownTID, false
	}
	if why, ok := c.want.match(pkt); !ok {
		// Not the answer to what c asked: a forgery or a stray.
		// The request waits on for its own.
		return why, false
	}
	if c.stream != nil {
		return c.toStream(pkt)
	}
	if c.result != resultNone {
		// The waiter is still handling a timeout report or an error:
		// this answer is late and the next attempt will get its own.
		return DropLate, false
	}
	for _, t := range c.tids {
		delete(p.calls, t)
	}
	c.resp.MAD = pkt.MAD
	c.resp.Addr = pkt.Addr
	c.result = resultResponse
	c.done <- struct{}{}
	return 0, true
}

// streamDepth is how many segments a GetTable buffers between the receive
// goroutine and its waiter; more (a sender ignoring the window) are
// dropped as late and recovered by the ACK prompt.
const streamDepth = 256

// toStream hands a copy of pkt to a GetTable waiter without blocking. The
// caller holds the table's lock, so c is still mapped and its channel
// open.
func (c *call) toStream(pkt *Packet) (DropReason, bool) {
	p := new(Packet)
	*p = *pkt
	select {
	case c.stream <- p:
		return 0, true
	default:
		return DropLate, false
	}
}

// Matching an answer to its request (docs/protocol.md, "Which answer is
// ours"). A TID alone proves nothing: any node the engine asks sees it,
// and the kernel checks only that an answer came back to the requester's
// own LID (its path bits) or GID, never who sent it. So an
// answer completes a request only when it is the answer to exactly what
// was asked: from the request's destination, of its class, with the
// response method of its method, its attribute and modifier and, in
// vendor range 2, its OUI. Anything else is dropped and counted by why.

// expected is what an answer to one request must carry, taken from the
// request as it was sent (its TID aside: each attempt has its own).
type expected struct {
	class  MgmtClass
	method Method // the response method
	attr   AttrID
	mod    uint32
	oui    OUI // vendor range 2 only
	// The responder. A directed-route SMP comes back along its own
	// path: the hop count and the initial path must be the request's. A
	// LID-routed MAD must come from the port it was sent to (one of the
	// 2^lmc LIDs of lid's block, lmc the responder's: Request.DestLMC),
	// a MAD sent with a GRH from the GID it was sent to when the answer
	// has a GRH.
	dr   bool
	hops uint8
	path [MaxDRHops + 1]byte
	lid  uint16
	lmc  uint8
	grh  bool
	gid  GID
}

// expect is what answers a request of m to a, whose port has LMC lmc.
func expect(m *MAD, a *Address, lmc uint8) expected {
	x := expected{class: m.MgmtClass(), attr: m.AttrID(), mod: m.AttrMod()}
	switch meth := m.Method(); meth {
	case MethodTrap:
		x.method = MethodTrapRepress
	default:
		x.method = meth.Response()
	}
	if x.class.IsVendorRange2() {
		x.oui = m.OUI()
	}
	switch {
	case m.IsDirectedRoute():
		x.dr = true
		x.hops = m.DRHopCount()
		if x.hops > MaxDRHops {
			x.hops = MaxDRHops
		}
		copy(x.path[:], m[drInitialPath:drInitialPath+int(x.hops)+1])
	default:
		x.lid, x.lmc = a.LID, lmc
		x.grh, x.gid = a.GRHPresent, a.GID
	}
	return x
}

// drInitialPath is the offset of a directed-route SMP's InitialPath.
const drInitialPath = 128

// match says whether pkt answers the request x was taken from, and if
// not, why it is dropped.
func (x *expected) match(pkt *Packet) (DropReason, bool) {
	m := &pkt.MAD
	if m.MgmtClass() != x.class {
		return DropUnknownTID, false
	}
	switch {
	case x.dr:
		if !m.DRDirection() || m.DRHopCount() != x.hops ||
			!bytes.Equal(m[drInitialPath:drInitialPath+int(x.hops)+1], x.path[:int(x.hops)+1]) {
			return DropWrongResponder, false
		}
	case x.grh && pkt.Addr.GRHPresent:
		if pkt.Addr.GID != x.gid {
			return DropWrongResponder, false
		}
	case x.grh:
		// No GRH came back (ibsim carries none): the answer must then
		// come from the port the request was sent to, the router's
		// for another subnet.
		if !sameLIDBlock(pkt.Addr.LID, x.lid, x.lmc) {
			return DropWrongResponder, false
		}
	case x.lid != PermissiveLID && !sameLIDBlock(pkt.Addr.LID, x.lid, x.lmc):
		return DropWrongResponder, false
	}
	if m.Method() != x.method {
		return DropWrongMethod, false
	}
	if m.AttrID() != x.attr || m.AttrMod() != x.mod {
		return DropWrongAttribute, false
	}
	if x.class.IsVendorRange2() && m.OUI() != x.oui {
		return DropWrongAttribute, false
	}
	return 0, true
}

// sameLIDBlock says whether slid, the source LID of an answer to a
// request sent to dlid, is dlid's port: dlid itself, or another LID of
// the 2^lmc that the responder's LMC gives it. A responder may answer
// from its base LID (ibsim and the simulator do, and so does an agent in
// user space that sends without path bits) whichever of its LIDs was
// asked. lmc is the responder's own (Request.DestLMC), never the local
// port's: the kernel applies the local LMC only to the requester's own
// path bits, and a subnet's LMC is not every port's (a switch's port 0
// has LMC 0, and OpenSM without lmc_esp0 may put several switch LIDs in
// one aligned block).
func sameLIDBlock(slid, dlid uint16, lmc uint8) bool {
	return slid>>(lmc&7) == dlid>>(lmc&7)
}
