// Command ibtracer_exporter traces a YAML list of InfiniBand destinations
// on a schedule, hop by hop, validating every hop with the ibtracer vendor
// agent, hosts that agent itself, and exports what it finds as Prometheus
// metrics (docs/architecture.md). The command only wires flags, logging,
// the listeners, the metrics registry and HTTP; internal/service owns the
// configuration, the device and reloads.
//
//	ibtracer_exporter --ib.transport=sim --config.file=examples/demo.yml   # no hardware
//	ibtracer_exporter --config.file=/etc/ibtracer_exporter/ibtracer.yml    # umad, the first CA
//	curl -s localhost:9684/traces?destination=leaf07
//	kill -HUP $(pidof ibtracer_exporter)                                   # reload the file
//
// docs/exporter.md (also `man ibtracer_exporter`) lists every flag.
package main
