// Package ibmad implements InfiniBand management datagrams (MADs) in pure Go:
// the wire formats of the common MAD header, directed-route SMPs, SA and vendor
// range-2 headers, the attributes the tracer needs (NodeInfo, PortInfo,
// SwitchInfo, LinearForwardingTable, PathRecord, NodeRecord, PortCounters, the
// ibtracer SourceRoute, ...), and the Engine: a request/response multiplexer
// with per-request timeouts, retries, a bounded window of outstanding MADs and
// dispatch of unsolicited requests to registered handlers.
//
// Byte layouts follow the IBA specification as verified against libibmad
// (see shared/spec/ib-mad-facts.md). Every decoder checks lengths before
// reading and returns an error wrapping ErrShort or ErrInvalid; none panics.
//
// Transports (umad, ibsim, the in-process simulator) implement Transport and
// import nothing above this package.
package ibmad
