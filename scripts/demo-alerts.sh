#!/usr/bin/env bash
# make demo-alerts: the exporter on the built-in simulated fabric with
# make run's faults, a Prometheus (Debian's prometheus) scraping it with
# the shipped rules (dashboards/ibtracer.shard.rules.yml and
# ibtracer.rules.yml) and an Alertmanager
# (Debian's prometheus-alertmanager) with the shipped example
# (dashboards/alertmanager.example.yml). Watch the alerts fire and
# resolve in Prometheus's and Alertmanager's web pages. Everything
# listens on 127.0.0.1, runs in a temporary directory and stops after
# DEMO_MINUTES (default 30) or on Ctrl-C. Not part of make test.
set -euo pipefail

minutes=${DEMO_MINUTES:-30}
exporter_addr=${DEMO_EXPORTER_ADDR:-127.0.0.1:9684}
prom_addr=${DEMO_PROMETHEUS_ADDR:-127.0.0.1:9690}
am_addr=${DEMO_ALERTMANAGER_ADDR:-127.0.0.1:9693}
root=$(cd "$(dirname "$0")/.." && pwd)

for tool in prometheus prometheus-alertmanager; do
	command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install $tool (scripts/deps.sh)" >&2; exit 1; }
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/ibtracer-demo-alerts.XXXXXX")
pids=()
cleanup() {
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM

(cd "$root" && CGO_ENABLED=0 go build -o "$dir/ibtracer_exporter" .)
cp "$root/dashboards/ibtracer.shard.rules.yml" "$dir/shard.rules.yml"
cp "$root/dashboards/ibtracer.rules.yml" "$dir/rules.yml"
cat >"$dir/prometheus.yml" <<EOC
global:
  scrape_interval: 5s
  evaluation_interval: 5s
rule_files: [shard.rules.yml, rules.yml]
alerting:
  alertmanagers:
    - static_configs:
        - targets: ["$am_addr"]
scrape_configs:
  - job_name: ibtracer
    static_configs:
      - targets: ["$exporter_addr"]
EOC

timeout "${minutes}m" "$dir/ibtracer_exporter" --ib.transport=sim --sim.agents=hosts:80% --sim.faults --sim.remote-subnet \
	--sim.multicast=0xc001:H0-0,H1-2,H3-3 --config.file="$root/examples/demo.yml" \
	--web.listen-address="$exporter_addr" >"$dir/exporter.log" 2>&1 &
pids+=($!)
timeout "${minutes}m" prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/tsdb" \
	--web.listen-address="$prom_addr" >"$dir/prometheus.log" 2>&1 &
pids+=($!)
timeout "${minutes}m" prometheus-alertmanager --config.file="$root/dashboards/alertmanager.example.yml" \
	--storage.path="$dir/am" --web.listen-address="$am_addr" --cluster.listen-address= >"$dir/alertmanager.log" 2>&1 &
pids+=($!)

cat <<EOT
For $minutes minutes (DEMO_MINUTES), on the simulated fabric with make run's faults:
  the exporter     http://$exporter_addr/        (/metrics, /traces)
  Prometheus       http://$prom_addr/alerts     (the shipped rules: pending, then firing)
  Alertmanager     http://$am_addr/             (grouped by link, node and destination; inhibitions)
The first faults come within a minute and last 3.5 minutes; the alerts
that watch them wait 2 minutes (for:) before they fire. Logs in $dir.
Ctrl-C stops everything.
EOT
# Returns when the first process ends (the time limit, or a failure).
wait -n "${pids[@]}" || true
for f in exporter prometheus alertmanager; do
	echo "== the last lines of $f.log"
	tail -n 5 "$dir/$f.log"
done
