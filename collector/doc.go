// Package collector runs the exporter's scheduled traces and exposes them
// as Prometheus metrics (docs/metrics.md): every destination on its own
// interval with a deterministic phase (so the exporters of a fabric do
// not trace in lockstep), at most Concurrency traces at once, never two
// at once for one destination; and a collector that turns the latest
// results, the MAD engine's counters and the hosted agent's counters into
// metrics whose cardinality is bounded by the configuration. It also
// serves the landing page and /traces.
//
// # The parts and their files
//
// The owner:
//   - exporter.go: Exporter, the thin owner of the configuration, the
//     device and the tracer (New, SetDevice, Apply, Stop); it wires the
//     parts below. The translation from configuration to trace.Options
//     (newTracer) is here too.
//   - seed.go: the seed of the phases (SetSeed, the port GUID, jitter_seed).
//   - tracing.go: traceOnce, one trace of a destination and where its
//     result goes; skipped traces (device down, device error).
//   - budget.go: the MAD budget (mad_rate) given to the engine, its series.
//   - clock.go: the clock the scheduler, the discovery loops and the
//     tracer share (one per Exporter; tests give a fake one).
//
// Scheduling:
//   - schedule.go: scheduler, its timers, queue and workers.
//   - phase.go: a destination's phase and next run.
//
// The destinations and what their traces found:
//   - destset.go: destSet, the destinations traced (configured and
//     discovered), reconciled on reload and on discovery.
//   - destination.go: destState, one destination's results and counters,
//     its last path health, and the exporter-wide histograms.
//   - multicast.go: destinations with mlid: (the multicast path to a
//     member, over the MFTs, not validated, no path health).
//   - paths.go: destinations with paths: all (every LID of the port).
//   - compact.go: what a destination keeps of its last trace.
//   - logstate.go: the state-change and path-change log lines.
//   - health.go: path and link health (health:): checks and their series.
//   - health_congestion.go: the congestion series of a link and a path.
//   - health_log.go: the log lines of a link whose counters become
//     unavailable or available again, once per change.
//   - evidence.go: per-link evidence (evidence:): each destination's
//     paths judged (localize) and summed per link at every scrape.
//   - linkinfo.go: ibtracer_link_info, both ends' node descriptions of
//     the links with evidence or unhealthy or congested, for the alerts.
//
// Discovered destinations (the discover: selectors):
//   - fleet.go: fleet, one loop per selector, refreshing from the SA.
//   - fleet_selection.go: which ports a selector picks, the sample, the names.
//   - fleet_inventory.go: the SA's inventory (NodeRecords).
//   - fleet_log.go: the refreshes' log lines.
//
// The discovery mode (the discovery: key, smp/sa/auto; not the selectors):
//   - discoverymode.go: traces by mode, SA record requests.
//
// The scrape:
//   - metrics.go: Collect and the per-destination series.
//   - devicedown.go: device_down_reason, why no device is open.
//   - labels.go: label sets shared across scrapes.
//   - registry.go: the registry and the /metrics handler.
//   - stream.go: /metrics with the exporter's families rendered one at a time.
//   - scrape_errors.go: series a scrape leaves out, counted and logged.
//   - sending.go, inflight.go: the memory and in-flight limits of answers,
//     and the render that concurrent scrapes of one form share.
//
// The pages (readers of the destinations' state):
//   - pages.go: pages, the stylesheet and helpers both pages share.
//   - landing.go: the landing page.
//   - pagehealth.go: what the pages show of the links: path health,
//     unhealthy and suspected links, by name.
//   - http.go: /traces (JSON and HTML), the MAD RTT histogram.
//   - tracespage.go: the /traces HTML templates and the path drawing.
//   - tracesquery.go: the /traces query, parsed strictly.
//   - tracesvia.go: /traces?link=NODE:PORT, the destinations whose path
//     crosses a link.
//   - tracesnames.go: the filters' nodes by name (node-name-map name or
//     node description) as well as by GUID.
//
// # Locks
//
// Each part owns its lock, and each lock field says what it guards:
// Exporter.mu (configuration, seed, device, tracer), destSet.mu (the
// destinations by name and the label names), fleet.mu (the selectors'
// sets, their inventory and refresh counts), scheduler.mu (the queue and
// every destination's place in the schedule), destState.mu and
// opsState.mu (one destination's results and log state). Exporter.mu is
// taken first when held with another; destSet.mu, fleet.mu and
// scheduler.mu are never held together; a destination's own locks are
// taken last. A method named …Locked runs with its receiver's own mutex
// held, and no other.
//
// Test hooks (which trace starts and ends, a fake inventory) live in
// export_test.go, not in the product types.
package collector
