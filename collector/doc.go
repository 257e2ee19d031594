// Package collector runs the exporter's scheduled traces and exposes them
// as Prometheus metrics (docs/metrics.md): every destination on its own interval
// with a deterministic phase (so the exporters of a fabric do not trace in
// lockstep), at most Concurrency traces at once, never two at once for one
// destination; and a collector that turns the latest results, the MAD
// engine's counters and the hosted agent's counters into metrics whose
// cardinality is bounded by the configuration.
package collector
