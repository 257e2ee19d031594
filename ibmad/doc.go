// Package ibmad implements InfiniBand management datagrams (MADs) in pure Go:
// the wire formats of the common MAD header, directed-route SMPs, SA and vendor
// range-2 headers, the attributes the tracer needs (NodeInfo, PortInfo,
// SwitchInfo, LinearForwardingTable, PathRecord, NodeRecord, PortCounters, the
// ibtracer SourceRoute, ...), and the Engine: a request/response multiplexer
// with per-request timeouts, retries, a bounded window of outstanding MADs and
// dispatch of unsolicited requests to registered handlers.
//
// Byte layouts follow the IBA specification as verified against libibmad
// (docs/protocol.md, "MAD formats the codecs rely on"). Every decoder
// checks lengths before reading and returns an error wrapping ErrShort or
// ErrInvalid; none panics.
//
// Transports (umad, ibsim, the in-process simulator) implement Transport and
// import nothing above this package.
//
// What each file holds:
//
// The wire formats:
//   - mad.go: the MAD, its common header, management classes, methods,
//     attribute IDs, the data offsets of each class, ErrShort, ErrInvalid.
//   - attrname.go: attribute names by class, for errors and logs.
//   - status.go: MAD status codes, StatusError, the SA's status strings.
//   - smp.go: directed-route and LID-routed SMPs, DRPath.
//   - sa.go: the SA header (SAMAD, component masks, NewSAGet).
//   - vendor.go: vendor range-2 MADs (OUI, NewVendorGet) and PerfMgt MADs.
//   - guid.go: GUID and GID, parsing and printing.
//
// The attributes, one file each (MarshalTo, MarshalBinary, UnmarshalBinary):
//   - nodeinfo.go: NodeType, NodeInfo, NodeDescription (shown by one rule,
//     whatever its bytes).
//   - portinfo.go: PortInfo, port and physical states.
//   - switchinfo.go: SwitchInfo and LinearForwardingTable blocks (LFTBlock).
//   - mft.go: MulticastForwardingTable blocks (port masks), the MLID range
//     and the attribute modifier.
//   - classportinfo.go: ClassPortInfo.
//   - portcounters.go: PortCounters and PortCountersExtended.
//   - vlxmitwait.go: PortVLXmitWaitCounters, the per-VL PortXmitWait.
//   - pathrecord.go: PathRecord and NodeRecord.
//   - sarecords.go: the SA records read in tables: LFTRecord, LinkRecord,
//     PortInfoRecord, SwitchInfoRecord.
//   - sourceroute.go: the ibtracer class's SourceRoute (docs/protocol.md).
//
// Transports and the clock:
//   - transport.go: Transport, Address, Packet, PortAttributes,
//     Registration.
//   - clock.go: Clock, the module's one time source, WallClock and ClockOr
//     (docs/architecture.md, "One clock").
//
// The engine:
//   - engine.go: Options, Request, Response, NewEngine, Do (TID mapping,
//     timeouts, retries, the windows of outstanding MADs).
//   - engine_attempt.go: an attempt's timeout and retries, its TID.
//   - engine_recv.go: the receive loop, finding an answer's request and
//     dispatching requests to handlers (Handle, Unhandle).
//   - match.go: whether an answer answers exactly what its request asked
//     (responder, class, method, attribute, modifier, OUI), and the
//     random TIDs (docs/protocol.md, "Which answer is ours").
//   - engine_device.go: the port's attributes (Port, CachedPort, the
//     refresh loop) and device loss (Lost, Err).
//   - engine_senderr.go: what a failed send means (gone, refused, try
//     again; docs/protocol.md "Send errors") and the reply workers that
//     send the handlers' answers off the receive goroutine.
//   - engine_budget.go: the MAD budget (Budget, SetBudget, BudgetStats),
//     golang.org/x/time/rate buckets on the budget's Clock.
//   - engine_rmpp.go: GetTable, an SA table over RMPP (tableCall: sends,
//     ACKs, prompts on silence).
//   - rmpp.go: the RMPP header, types, flags and sizes; Table.
//   - rmpp_receiver.go: the receiver that checks and reassembles each
//     segment (rmppReceiver.feed).
//   - stats.go: the engine's counters (Stats, ClassStats, DropReason).
//
// Tests: codec_test.go, wire_test.go and fuzz_test.go (the codecs),
// libibmad_test.go, sa_cgo_test.go and sarecords_cgo_test.go (cross-checks
// against libibmad and OpenSM's headers, cgo), engine_*_test.go,
// pending_test.go and device_test.go (the engine), match_test.go (forged
// answers, FuzzMatch), rmpp_fuzz_test.go,
// example_test.go (Engine.Do, Engine.GetTable, the codecs).
package ibmad
