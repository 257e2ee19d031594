// Package trace is the ibtracer algorithm (docs/architecture.md), shared by the
// one-shot ibtracer command and the exporter. A trace walks from the local
// port to a destination LID with directed-route SMPs (NodeInfo, PortInfo,
// and at switches the LinearForwardingTable block holding the DLID), then
// asks the vendor agent at every hop that runs one, with a LID-routed
// VendorGet(SourceRoute), on which port the request really arrived. The
// expected ingress ports are those of the LID route to the LID the MAD is
// addressed to, computed from the same forwarding tables, so a correct
// fabric yields no status 7.
//
// A repeat trace of an unchanged path does not walk again: it re-reads, all
// at once, the LFT block of every switch on the path and re-asks every
// agent, and falls back to the walk only when something differs.
//
// The package holds, one concern a file: the Tracer and its Options
// (tracer.go); one trace from resolution to verdict (trace.go); turning a
// GID, GUID or node name into a LID through the SA (resolve.go); the
// directed-route walk (walk.go); the agents' validation and the expected
// routes it needs (validate.go); the fast path that confirms a known path
// (fastpath.go); what traces share and what a failed trace forgets
// (caches.go), all kept in one bounded TTL cache type on an injectable
// clock (cache.go); destinations, hops and results (types.go) and their
// text and JSON reports (report.go).
package trace
