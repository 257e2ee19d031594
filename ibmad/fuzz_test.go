package ibmad

import (
	"testing"
)

// codec is what every attribute and MAD type implements.
type codec[T any] interface {
	*T
	UnmarshalBinary([]byte) error
	MarshalTo([]byte) error
}

// roundTrip decodes b; whatever decodes must encode and decode back to the
// same value. Neither step may panic.
func roundTrip[T comparable, P codec[T]](t *testing.T, b []byte, size int) {
	var v T
	if err := P(&v).UnmarshalBinary(b); err != nil {
		return
	}
	out := make([]byte, size)
	if err := P(&v).MarshalTo(out); err != nil {
		t.Fatalf("decoded value does not encode: %v", err)
	}
	var w T
	if err := P(&w).UnmarshalBinary(out); err != nil {
		t.Fatalf("re-decode: %v", err)
	}
	if v != w {
		t.Fatalf("round trip changed the value:\n%+v\n%+v", v, w)
	}
}

func seeds(f *testing.F, sizes ...int) {
	for _, n := range sizes {
		f.Add(make([]byte, n))
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*37 + 11)
		}
		f.Add(b)
	}
	f.Add([]byte{})
}

func madSeed(class MgmtClass) []byte {
	b := make([]byte, MADSize)
	b[0], b[1], b[2], b[3] = 1, byte(class), 1, 1
	return b
}

func FuzzHeader(f *testing.F) {
	seeds(f, 24, 256)
	f.Fuzz(func(t *testing.T, b []byte) { roundTrip[Header](t, b, MADSize) })
}

func FuzzSMP(f *testing.F) {
	seeds(f, 256)
	f.Add(madSeed(ClassSubnDR))
	f.Add(madSeed(ClassSubnLID))
	f.Fuzz(func(t *testing.T, b []byte) { roundTrip[SMP](t, b, MADSize) })
}

func FuzzSAMAD(f *testing.F) {
	seeds(f, 256)
	f.Add(madSeed(ClassSubnAdm))
	f.Fuzz(func(t *testing.T, b []byte) { roundTrip[SAMAD](t, b, MADSize) })
}

func FuzzVendorMAD(f *testing.F) {
	seeds(f, 256)
	f.Add(madSeed(ClassIBTracer))
	f.Fuzz(func(t *testing.T, b []byte) { roundTrip[VendorMAD](t, b, MADSize) })
}

func FuzzPerfMgtMAD(f *testing.F) {
	seeds(f, 256)
	f.Add(madSeed(ClassPerfMgt))
	f.Fuzz(func(t *testing.T, b []byte) { roundTrip[PerfMgtMAD](t, b, MADSize) })
}

func FuzzNodeInfo(f *testing.F) {
	seeds(f, NodeInfoSize)
	f.Fuzz(func(t *testing.T, b []byte) { roundTrip[NodeInfo](t, b, NodeInfoSize) })
}

func FuzzNodeDescription(f *testing.F) {
	seeds(f, NodeDescriptionSize)
	f.Fuzz(func(t *testing.T, b []byte) {
		roundTrip[NodeDescription](t, b, NodeDescriptionSize)
		var d NodeDescription
		if d.UnmarshalBinary(b) == nil {
			_ = d.String()
		}
	})
}

func FuzzPortInfo(f *testing.F) {
	seeds(f, PortInfoSize)
	f.Fuzz(func(t *testing.T, b []byte) { roundTrip[PortInfo](t, b, PortInfoSize) })
}

func FuzzSwitchInfo(f *testing.F) {
	seeds(f, SwitchInfoSize)
	f.Fuzz(func(t *testing.T, b []byte) { roundTrip[SwitchInfo](t, b, SwitchInfoSize) })
}

func FuzzLFTBlock(f *testing.F) {
	seeds(f, LFTBlockSize)
	f.Fuzz(func(t *testing.T, b []byte) { roundTrip[LFTBlock](t, b, LFTBlockSize) })
}

func FuzzClassPortInfo(f *testing.F) {
	seeds(f, ClassPortInfoSize)
	f.Fuzz(func(t *testing.T, b []byte) { roundTrip[ClassPortInfo](t, b, ClassPortInfoSize) })
}

func FuzzPathRecord(f *testing.F) {
	seeds(f, PathRecordSize)
	f.Fuzz(func(t *testing.T, b []byte) { roundTrip[PathRecord](t, b, PathRecordSize) })
}

func FuzzNodeRecord(f *testing.F) {
	seeds(f, NodeRecordSize)
	f.Fuzz(func(t *testing.T, b []byte) { roundTrip[NodeRecord](t, b, NodeRecordSize) })
}

func FuzzPortCounters(f *testing.F) {
	seeds(f, PortCountersSize)
	f.Fuzz(func(t *testing.T, b []byte) { roundTrip[PortCounters](t, b, PortCountersSize) })
}

func FuzzPortCountersExtended(f *testing.F) {
	seeds(f, PortCountersExtendedSize)
	f.Fuzz(func(t *testing.T, b []byte) { roundTrip[PortCountersExtended](t, b, PortCountersExtendedSize) })
}

func FuzzPortRcvErrorDetails(f *testing.F) {
	seeds(f, PortRcvErrorDetailsSize)
	f.Fuzz(func(t *testing.T, b []byte) { roundTrip[PortRcvErrorDetails](t, b, PortRcvErrorDetailsSize) })
}

func FuzzPortXmitDiscardDetails(f *testing.F) {
	seeds(f, PortXmitDiscardDetailsSize)
	f.Fuzz(func(t *testing.T, b []byte) { roundTrip[PortXmitDiscardDetails](t, b, PortXmitDiscardDetailsSize) })
}

// FuzzPortExtendedSpeedsCounters decodes in both layouts: neither panics,
// and each round-trips.
func FuzzPortExtendedSpeedsCounters(f *testing.F) {
	seeds(f, PortExtendedSpeedsCountersSize)
	f.Fuzz(func(t *testing.T, b []byte) {
		roundTrip[PortExtendedSpeedsCounters](t, b, PortExtendedSpeedsCountersSize)
		v := PortExtendedSpeedsCounters{RSFEC: true}
		if v.UnmarshalBinary(b) != nil {
			return
		}
		out, err := v.MarshalBinary()
		w := PortExtendedSpeedsCounters{RSFEC: true}
		if err != nil || w.UnmarshalBinary(out) != nil || v != w {
			t.Fatalf("RS-FEC round trip: %v\n%+v\n%+v", err, v, w)
		}
	})
}

func FuzzSourceRoute(f *testing.F) {
	seeds(f, SourceRouteSeedSize, SourceRouteSize)
	f.Fuzz(func(t *testing.T, b []byte) {
		var s SourceRoute
		if s.UnmarshalBinary(b) != nil {
			return
		}
		_, _ = s.ExpectedInPort()
		_ = s.Validate()
		// The extension is kept only when ExtVersion != 0; otherwise zero.
		if s.ExtVersion == 0 && (s.NodeGUID != 0 || s.Flags != 0) {
			t.Fatal("extension fields set on a seed-format answer")
		}
		roundTrip[SourceRoute](t, b, SourceRouteSize)
	})
}

func FuzzParseGID(f *testing.F) {
	f.Add("fe80::2:c903:a1:b2c3")
	f.Add("fe80:0000:0000:0000:0002:c903:00a1:b2c3")
	f.Add("::ffff:10.0.0.1%eth0")
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGID(s)
		if err != nil {
			return
		}
		h, err := ParseGID(g.String())
		if err != nil || h != g {
			t.Fatalf("%q -> %s -> %v %s", s, g, err, h)
		}
	})
}

func FuzzParseGUID(f *testing.F) {
	f.Add("0x0002c90300a1b2c3")
	f.Add("0002:c903:00a1:b2c3")
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGUID(s)
		if err != nil {
			return
		}
		h, err := ParseGUID(g.String())
		if err != nil || h != g {
			t.Fatalf("%q -> %s -> %v %s", s, g, err, h)
		}
	})
}

// nullTransport accepts every send and never receives.
type nullTransport struct{ done chan struct{} }

func (n *nullTransport) Send(*Packet) error            { return nil }
func (n *nullTransport) Recv(*Packet) error            { <-n.done; return ErrClosed }
func (n *nullTransport) Register(Registration) error   { return nil }
func (n *nullTransport) Port() (PortAttributes, error) { return PortAttributes{}, nil }
func (n *nullTransport) Close() error {
	select {
	case <-n.done:
	default:
		close(n.done)
	}
	return nil
}

// FuzzEngineReceive feeds arbitrary packets to the engine's receive path,
// with a handler registered and a request outstanding: nothing may panic,
// and every packet is exactly one of: delivered to the waiter, handed to
// the handler, or counted as dropped by reason.
func FuzzEngineReceive(f *testing.F) {
	f.Add(madSeed(ClassIBTracer), false, uint8(1), false)
	f.Add(madSeed(ClassSubnLID), true, uint8(0), false)
	f.Add(madSeed(ClassSubnLID), true, uint8(0), true)
	resp := madSeed(ClassSubnLID)
	resp[3] = byte(MethodGetResp)
	f.Add(resp, false, uint8(0), false)
	f.Add(resp, false, uint8(0), true)
	f.Fuzz(func(t *testing.T, b []byte, timedOut bool, inPort uint8, otherTID bool) {
		e := NewEngine(&nullTransport{done: make(chan struct{})}, Options{})
		defer e.Close()
		handled := 0
		_ = e.Handle(ClassIBTracer, 1, OUIOpenIB, []Method{MethodGet}, false, func(req, out *Packet) bool {
			handled++
			out.MAD = req.MAD
			out.MAD.SetMethod(MethodGetResp)
			return inPort%2 == 0 // sometimes the handler declines (an agent's rate limit)
		})
		class := MgmtClass(0)
		if len(b) > 1 {
			class = MgmtClass(b[1])
		}
		c := newCall(class, expected{}, &Response{})
		var pkt Packet
		copy(pkt.MAD[:], b)
		tid := pkt.MAD.TIDLow()
		if otherTID {
			tid++ // the outstanding request is not the one answered
		}
		e.pending.mu.Lock()
		e.pending.calls[tid] = c
		c.tids = append(c.tids, tid)
		c.current = tid
		e.pending.mu.Unlock()
		pkt.TimedOut = timedOut
		pkt.InPort, pkt.InPortKnown = inPort, inPort != 0
		before := e.Stats()
		e.dispatch(&pkt, &Packet{})
		after := e.Stats()
		delivered := 0
		select {
		case <-c.done:
			delivered = 1
		default:
		}
		var dropped uint64
		for r, n := range after.Drops {
			dropped += n - before.Drops[r]
		}
		if got := uint64(delivered+handled) + dropped; got != 1 {
			t.Fatalf("one packet (method %s class %s timed out %v, other TID %v): delivered %d, handled %d, dropped %d: want exactly one outcome",
				pkt.MAD.Method(), pkt.MAD.MgmtClass(), timedOut, otherTID, delivered, handled, dropped)
		}
		// The engine's own accounting says the same.
		if after.Received-before.Received != 1 || after.Delivered-before.Delivered != uint64(delivered) ||
			after.Handled-before.Handled != uint64(handled) {
			t.Fatalf("engine counted received %d delivered %d handled %d; the test saw 1, %d, %d",
				after.Received-before.Received, after.Delivered-before.Delivered, after.Handled-before.Handled, delivered, handled)
		}
		e.pending.unmap(c)
	})
}
