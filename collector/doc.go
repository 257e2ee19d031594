// Package collector runs the exporter's scheduled traces and exposes them
// as Prometheus metrics (docs/metrics.md): every destination on its own
// interval with a deterministic phase (so the exporters of a fabric do
// not trace in lockstep), at most Concurrency traces at once, never two
// at once for one destination; and a collector that turns the latest
// results, the path health, the link evidence, the MAD engine's counters
// and the hosted agent's counters into metrics whose cardinality is
// bounded by the configuration.
//
// An Exporter is given its Runtime whole: the configuration and the
// device. Its owner (internal/service) installs a new one at every
// reload and every device change; destinations that stay keep their
// counters and schedule:
//
//	e := collector.New(logger, "")
//	defer e.Stop()
//	e.Install(collector.Runtime{Config: cfg})                        // no device yet: traces are skipped
//	e.SetSeed(port.PortGUID.String())                                // the phases' seed
//	e.Install(collector.Runtime{Config: cfg, Engine: eng, Agent: ag}) // traces start
//	reg := collector.NewRegistry(e)
//	http.Handle("/metrics", collector.MetricsHandler(reg, collector.DefaultMetricsInFlight, logger))
//	http.Handle("/traces", e.TracesHandler())
//	http.Handle("/", e.LandingHandler(pages.Landing{Name: "ibtracer_exporter", Links: pages.DefaultLinks}))
//
// The destinations of the discover: selectors come from package fleet,
// the pages from package pages (which read a snapshot of the
// destinations per request), and the HTTP limits from
// internal/webserve.
//
// Concurrency: the installed runtime is swapped whole (an atomic
// pointer), so a trace, a scrape or a page reads one configuration and
// one device. Each part has its own lock and says what it guards; no
// part calls another while holding its own, except that Install, a
// selector's new set and Stop are applied one at a time
// (Exporter.changing).
package collector
