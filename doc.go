// Command ibtracer_exporter traces a YAML list of InfiniBand destinations
// on a schedule, hop by hop, validating every hop with the ibtracer vendor
// agent, hosts that agent itself, and exports what it finds as Prometheus
// metrics (docs/architecture.md). The command only wires flags, logging,
// the metrics registry and HTTP; internal/service owns the configuration,
// the device and reloads.
//
// What each file holds:
//   - main.go: the flags and run, which builds the service, the registry,
//     the routes (/metrics, /traces, /-/healthy, /-/reload, the landing
//     page) and the HTTP server (internal/webserve: its limits), and
//     handles SIGHUP and SIGTERM.
//   - logging.go: the go-kit logger and the slog logger of the web toolkit,
//     writing ts, caller and level once.
//   - listen.go: the listeners (systemd sockets, addresses, vsock), each
//     wrapped in the limiter, served with TLS and basic auth by the toolkit.
//   - webconfig.go: the checked copy of --web.config.file that
//     exporter-toolkit reads (bounded, files inline, refreshed on change).
package main
