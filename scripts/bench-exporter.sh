#!/usr/bin/env bash
# Capacity benchmark of the exporter: 10,000 destinations on a simulated
# fabric of 10,240 CA ports (a two-level fat tree of 128 leaves, 64 spines,
# 80 hosts per leaf), traced every 60 s, agents on every node. Reports the
# exporter's CPU share and peak RSS over the run, and /metrics scrape time
# and size. Loopback only; everything it starts it stops.
#   usage: scripts/bench-exporter.sh [seconds=150] [destinations=10000]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-150}
n=${2:-10000}
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$work"' EXIT

python3 ../shared/tools/gen_fattree.py 128 64 80 > "$work/fabric.net" 2>/dev/null ||
	python3 shared/tools/gen_fattree.py 128 64 80 > "$work/fabric.net"
# LIDs: 192 switches first (1..192), then the hosts from 193 (sim order).
{
	echo "interval: 60s"
	echo "timeout: 500ms"
	echo "retries: 1"
	echo "concurrency: 32"
	echo "destinations:"
	for ((i = 0; i < n; i++)); do echo "  - {name: d$i, lid: $((194 + i))}"; done
} > "$work/config.yml"
CGO_ENABLED=0 go build -o "$work/ibtracer_exporter" .
port=$((20000 + RANDOM % 20000))
"$work/ibtracer_exporter" --config.file="$work/config.yml" --web.listen-address="127.0.0.1:$port" \
	--ib.transport=sim --sim.topology="$work/fabric.net" --sim.agents=all --log.level=error &
pid=$!
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
until curl -sf "127.0.0.1:$port/-/healthy" > /dev/null; do sleep 0.5; done
start_cpu=$(cpu)
start=$(date +%s.%N)
sleep "$secs"
end_cpu=$(cpu)
end=$(date +%s.%N)
echo "destinations: $n, fabric: $(grep -c '^Hca' "$work/fabric.net") CA ports, interval 60s, measured ${secs}s"
awk -v c0="$start_cpu" -v c1="$end_cpu" -v t0="$start" -v t1="$end" -v hz="$ticks" \
	'BEGIN { printf "cpu share: %.1f%% of one core\n", 100 * (c1 - c0) / hz / (t1 - t0) }'
grep VmHWM "/proc/$pid/status" | awk '{printf "peak RSS: %.0f MiB\n", $2 / 1024}'
for i in 1 2 3; do
	curl -s -o "$work/metrics.txt" -w "scrape: %{time_total} s, %{size_download} bytes\n" "127.0.0.1:$port/metrics"
done
echo "series: $(grep -vc '^#' "$work/metrics.txt")"
echo "destinations traced: $(grep -c '^ibtracer_trace_success{.*} 1' "$work/metrics.txt") ok of $n"
grep -E '^ibtracer_mad_(requests|timeouts)_total' "$work/metrics.txt" | head -8
