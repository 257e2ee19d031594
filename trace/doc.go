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
// With Options.ShareFacts the walks of one run share what their SMPs
// read: every fact is asked once, whichever trace needs it first.
//
// A repeat trace of an unchanged path does not walk again: it re-reads, all
// at once, the LFT block of every switch on the path and re-asks every
// agent, and falls back to the walk only when something differs.
//
// The health of a traced path's links is package linkhealth's, which
// imports this one; the exit statuses of the ibtracer command are
// cmd/ibtracer's.
//
// What each file holds:
//   - tracer.go: the Tracer and its Options.
//   - trace.go: one trace, from resolution to verdict.
//   - resolve.go: a GID, GUID or node name turned into a LID through the
//     SA, and the resolutions kept for Options.ResolveTTL.
//   - allports.go: every CA port the SA knows from one NodeRecord table,
//     else LID by LID, each named as soon as the SA answers
//     (AllCAPorts, StreamCAPorts; LID by LID alone: StreamCAPortsBySA,
//     ibtracer --all under SA-only discovery), or at the LIDs given
//     (CAPortsAt).
//   - allports_routed.go: the NodeRecord table alone (CAPortsTable), the
//     LIDs the local switch forwards (LocalForwarding) and whether a
//     trace shows its LID to be a CA port's (CAPortOf): --all's listing
//     where the SA cuts its table short.
//   - reached.go: whether a trace reached the port its destination names,
//     and the local port's LID changing under the tracer.
//   - walk.go: the directed-route walk, hop by hop.
//   - source.go: tracing from another port than the local one
//     (ibtracert's SRC_LID DST_LID).
//   - discovery.go: how traces learn the path (smp, sa, auto) and the
//     state SA-only discovery keeps.
//   - sawalk.go, sarecords.go, salinks.go: the walk without SMPs, from the SA's
//     records, and the SA records it reads.
//   - validate.go: asking the agents, and the expected routes it needs.
//   - addressing.go: how the validation MADs are addressed: the SL (the
//     PathRecord's unless configured) and the GRH a PathRecord asks for
//     (Addressing).
//   - sma.go: the validation modes (ValidateMode, ParseValidate), who
//     validated a hop (Validator), and validation by a hop's own SMA with
//     a LID-routed NodeInfo.
//   - fastpath.go: confirming a known path without walking it again.
//   - facts.go: the SMP answers a run's walks share, each asked once
//     (Options.ShareFacts), and the trace again afresh when they may hide
//     a change.
//   - flights.go: one flight per validation question (a hop's shared
//     verdict, a node's agent support): concurrent traces wait for the
//     answer in flight instead of asking again.
//   - caches.go: what traces share and what a failed trace forgets;
//     cache.go: the one bounded TTL cache type they use
//     (internal/ttlcache), on an injectable clock.
//   - lmc.go: every path to a port whose LMC gives it several LIDs
//     (PathSet, Tracer.TraceAll).
//   - multicast.go, multicast_walk.go, multicast_explain.go,
//     multicast_report.go: Tracer.TraceMulticast, ibtracert -m's search
//     over the multicast forwarding tables, the switch named when it
//     misses the destination, and its report.
//   - via.go: a link named by one end (LinkPort, ParseLinkPort; by name
//     or GUID, LinkRef) and where a traced path crosses it
//     (Result.Crosses): ibtracer --via and /traces?link=.
//   - nodenames.go: nodes for people, name first and GUID after
//     (NodeLabel), and names looked up (Nodes; AmbiguousError lists the
//     nodes a name fits).
//   - subnet.go: a GID of another subnet: resolved to the router port's
//     LID by the local SA, the walk stopped at the router (left_subnet),
//     and the remote SA asked through the router (Beyond);
//     subnet_report.go: its text and JSON.
//   - types.go: destinations, hops, results, outcomes and reasons;
//     status.go: the order of outcomes from best to worst (Status.Worse).
//   - verdicts.go: a path's hops counted by verdict, in the words of the
//     reports.
//   - report.go: the text and JSON reports.
//   - probe.go: what the link health needs of a tracer: its MADs sent
//     the way a trace sends them (Probe), and the PortInfo the walk reads
//     (Tracer.OnPortInfo); probe_addressing.go: the probe of a traced
//     path, whose GMPs go on the SL its trace used (Tracer.ProbeFor).
package trace
