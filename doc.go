// Command ibtracer_exporter traces a YAML list of InfiniBand destinations
// on a schedule, hop by hop, validating every hop with the ibtracer vendor
// agent, hosts that agent itself, and exports what it finds as Prometheus
// metrics (docs/architecture.md). This file only wires flags, logging,
// the metrics registry and HTTP; internal/service owns the configuration,
// the device and reloads.
package main
