module github.com/ibtracer/ibtracer_exporter

go 1.26.0

require (
	github.com/alecthomas/kingpin/v2 v2.4.0
	github.com/prometheus/common v0.73.1
	golang.org/x/sys v0.49.0
)

require (
	github.com/alecthomas/units v0.0.0-20240927000941-0f3dac36c52b // indirect
	github.com/go-kit/log v0.2.1 // indirect
	github.com/go-logfmt/logfmt v0.6.1 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/prometheus/exporter-toolkit v0.20.0 // indirect
	github.com/tjhop/slog-gokit v0.2.2 // indirect
	github.com/xhit/go-str2duration/v2 v2.1.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
)
