package ibmad

import (
	"testing"
)

// TestReplyQueueLongestLoses: with the reply queue full, the reply
// dropped is always the newest of the requester that holds the most; a
// requester that holds fewer loses none, and the workers serve the
// requesters in turn (recv.go, docs/protocol.md "What the agent
// answers").
func TestReplyQueueLongestLoses(t *testing.T) {
	var rq replyQueue
	rq.init()
	a, b, c := Requester{LID: 9}, Requester{LID: 10}, Requester{GID: MakeGID(0xfec0000000000002, 7)}
	tagged := func(r Requester, i int) *Packet {
		p := &Packet{Addr: Address{LID: r.LID}}
		p.MAD.SetTID(uint64(i))
		return p
	}
	// a fills the queue; its next reply is its own loss.
	for i := range replyQueueLen {
		if d, _, _ := rq.push(a, tagged(a, i)); d != nil {
			t.Fatalf("a's reply %d dropped with room in the queue", i)
		}
	}
	p := tagged(a, replyQueueLen)
	if d, of, first := rq.push(a, p); d != p || of != a || !first {
		t.Fatalf("a's reply past the queue: dropped %v (of %v, first %v), want itself, first", d, of, first)
	}
	// b's replies take a's newest places until both hold half.
	for i := range 200 {
		d, of, first := rq.push(b, tagged(b, i))
		switch {
		case i < replyQueueLen/2 && (d == nil || of != a || d.MAD.TID() != uint64(replyQueueLen-1-i) || first):
			t.Fatalf("b's reply %d: dropped %v of %v (first %v), want a's newest, TID %d", i, d, of, first, replyQueueLen-1-i)
		case i >= replyQueueLen/2 && (d == nil || of != b):
			t.Fatalf("b's reply %d with b and a at %d each: dropped %v of %v, want b's own", i, replyQueueLen/2, d, of)
		}
	}
	if len(rq.fifo[a]) != replyQueueLen/2 || len(rq.fifo[b]) != replyQueueLen/2 || rq.n != replyQueueLen {
		t.Fatalf("a holds %d, b %d, %d in all; want %d each", len(rq.fifo[a]), len(rq.fifo[b]), rq.n, replyQueueLen/2)
	}
	// c, holding none, loses none: one of the longest (a or b, 128
	// each) gives way.
	if d, of, _ := rq.push(c, tagged(c, 0)); d == nil || of == c {
		t.Fatalf("c's first reply: dropped %v of %v, want another's", d, of)
	}
	// Served in turn: a, b, c, a, b, ...
	want := []Requester{a, b, c, a, b, a, b}
	for i, w := range want {
		<-rq.ready
		p, _ := rq.pop()
		if p.Addr.LID != w.LID {
			t.Fatalf("pop %d: a reply to LID %d, want %v's", i, p.Addr.LID, w)
		}
	}
	// Every token stands for one queued reply.
	if len(rq.ready) != rq.n {
		t.Fatalf("%d tokens for %d replies", len(rq.ready), rq.n)
	}
	// Drained, the queue says how many it dropped on the way.
	var dropped uint64
	for rq.n > 0 {
		<-rq.ready
		_, dropped = rq.pop()
	}
	if wantDropped := uint64(1 + 200 + 1); dropped != wantDropped || len(rq.fifo) != 0 || len(rq.turn) != 0 {
		t.Fatalf("drained: %d dropped (want %d), %d FIFOs and %d turns left", dropped, wantDropped, len(rq.fifo), len(rq.turn))
	}
}

// TestRequesterOf: one requester however it addresses us; a GID only
// when its LID cannot tell (none, or a router's).
func TestRequesterOf(t *testing.T) {
	local := MakeGID(DefaultGIDPrefix, 0x0002c90300000009)
	site := MakeGID(0xfec0000000000001, 0x0002c90300000009)
	remote := MakeGID(0xfec0000000000002, 0x0002c90300000009)
	for _, tc := range []struct {
		name   string
		a      Address
		prefix uint64
		want   Requester
	}{
		{"no GRH", Address{LID: 9}, 0, Requester{LID: 9}},
		{"GRH, link-local GID", Address{LID: 9, GRHPresent: true, GID: local}, 0, Requester{LID: 9}},
		{"GRH, our site prefix", Address{LID: 9, GRHPresent: true, GID: site}, 0xfec0000000000001, Requester{LID: 9}},
		{"GRH, link-local on a site prefix", Address{LID: 9, GRHPresent: true, GID: local}, 0xfec0000000000001, Requester{LID: 9}},
		{"beyond a router", Address{LID: 9, GRHPresent: true, GID: remote}, 0xfec0000000000001, Requester{GID: remote}},
		{"no LID", Address{GRHPresent: true, GID: local}, 0, Requester{GID: local}},
		{"GRH without a GID", Address{LID: 9, GRHPresent: true}, 0, Requester{LID: 9}},
	} {
		if got := RequesterOf(tc.a, tc.prefix); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
