// Package service owns the exporter's lifecycle, so that main only wires
// flags, logging and HTTP. One Service holds the configuration (the
// running *config.Config, replaced whole under one lock by Reload), the
// device (transport, engine and hosted agent) and the
// collector.Exporter, and is the one place where a reload or a device
// change is applied: it hands the exporter both at once
// (Exporter.Install with a collector.Runtime).
//
// The device is opened with backoff for the life of the process: at start,
// and again whenever the engine reports the device lost (a send or
// receive error, or a failed port read: ibsim killed, umad device gone).
// While it is down the exporter is told so (Exporter.Install with the
// error: device_up 0) and the destinations keep their schedule.
//
// Reload rules, key by key. Every key takes effect on reload except those
// fixed when the device is opened, whose change is refused:
//
//   - destinations (their paths and mlid keys included), interval, concurrency: the
//     exporter starts, stops and reschedules destinations (Exporter.Install).
//   - timeout, retries, sl, validate, share_validation, agent_support_ttl,
//     resolve_ttl, discovery, oui: a new tracer
//     is built; every request of a trace carries the timeout and retries,
//     so the engine's own defaults play no part.
//   - health (enabled, expect_width, expect_speed, counters, limits,
//     threshold_file): the new tracer gets a new health checker
//     (linkhealth.NewChecker, which the collector's Exporter.Install
//     calls); the ports' counters are read afresh, so the first interval
//     after a reload reports no increments.
//   - evidence (enabled, latency_threshold, max_links): the collector
//     reads them at each scrape, so the next scrape follows them; the
//     evidence is computed from what the destinations keep, nothing to
//     rebuild.
//   - oui, agent.enabled, agent.ping, agent.rate_per_source, agent.burst,
//     agent.hostname: the hosted agent is replaced on the same engine, so
//     the tracer and the hosted agent always use the same OUI. (The --agent
//     flag, which decides whether the device accepts requests at all, is a
//     flag: it needs a restart by nature.)
//   - mad_rate, mad_rate_per_target: the exporter gives the running
//     engine the new budget (Engine.SetBudget); requests waiting keep the
//     wait they were given.
//   - discover: the exporter restarts its discovery loops with the new
//     selectors; destinations that stay selected keep their state.
//   - mad_window, mad_window_per_target: the engine's windows are sized
//     when the device opens; a change is refused with "<key> needs a
//     restart", config_last_reload_successful goes to 0 and the running
//     configuration stays.
//
// A refused or unreadable file never changes anything that runs.
//
// Use:
//
//	svc, err := service.New(service.Options{ConfigFile: path, Logger: logger, IB: ib, HostAgent: true})
//	reg := collector.NewRegistry(svc.Collectors()...)
//	go svc.Run(ctx)   // opens the device, reopens it when lost
//	_ = svc.Reload()  // on SIGHUP, or POST /-/reload (svc.ReloadHandler())
package service
