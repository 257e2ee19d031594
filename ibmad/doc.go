// Package ibmad speaks InfiniBand management datagrams (MADs) in pure Go:
// the wire formats the tracer needs, and an Engine that sends requests
// and matches their answers over a Transport.
//
// # Building and reading MADs
//
// A request is a 256-byte MAD. Build it from a class header (NewDRGet or
// NewLIDGet for an SMP, NewSAGet for the SA, NewPerfMgtGet, NewVendorGet),
// put the attribute in its data, and MarshalTo the request's MAD:
//
//	smp, err := ibmad.NewDRGet(ibmad.AttrNodeInfo, 0, ibmad.DRPath{1})
//	req := &ibmad.Request{Addr: ibmad.DRAddress()}
//	err = smp.MarshalTo(req.MAD[:])
//
// An answer's attribute is read from its class's data with the
// attribute's UnmarshalBinary (NodeInfo, PortInfo, SwitchInfo, LFTBlock,
// MFTBlock, PathRecord, NodeRecord, PortCounters, SourceRoute, ...):
//
//	var ni ibmad.NodeInfo
//	err = ni.UnmarshalBinary(resp.MAD.SMPData())
//
// Every decoder checks lengths before it reads and returns an error
// wrapping ErrShort or ErrInvalid; none panics. The layouts follow the
// IBA specification as libibmad and OpenSM read it (docs/protocol.md,
// "MAD formats the codecs rely on"); the tests check them against their
// C headers.
//
// # Sending: the Engine
//
// NewEngine runs over a Transport: umad.Open on a host's port, ibsim.Dial
// under the ibsim simulator, or a port of the built-in simulated fabric
// (package sim). Engine.Do sends one request and waits for its answer,
// with a timeout per attempt and retries (Options, or per Request;
// Request.NoRetry sends it once). Engine.GetTable reads an SA table
// over RMPP. Every attempt has a random TID, and an answer completes a
// request only when it answers exactly what was asked, from where it was
// sent; anything else is dropped and counted (Stats, DropReason).
//
// The engine bounds what it sends: MaxOutstanding MADs in flight,
// MaxPerTarget to one node, and an optional Budget of MADs per second
// (SetBudget). Engine.Handle serves unsolicited requests (the hosted
// agent); handlers run on the receive goroutine and must not block.
//
// When the device goes away the engine is lost for good: Lost is closed,
// Err says why, and every request fails with an error wrapping
// ErrDeviceLost. Its owner closes it and opens a new transport.
//
// Time comes from a Clock (WallClock unless a test gives another; see
// docs/architecture.md, "One clock").
//
// Each MAD type (SMP, SAMAD, VendorMAD, PerfMgtMAD) keeps its own
// MarshalBinary and UnmarshalBinary even where only tests call them:
// without them the embedded Header's would be promoted, and decode the
// header alone without a word.
package ibmad
