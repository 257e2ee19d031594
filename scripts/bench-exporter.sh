#!/usr/bin/env bash
# Capacity benchmark of the exporter: 10,000 destinations on a simulated
# fabric of 10,240 CA ports (a two-level fat tree of 128 leaves, 64 spines,
# 80 hosts per leaf), traced every 60 s, agents on every node.
#
# Two runs of the same binary on the same fabric: first with no
# destination (the simulated fabric alone: its peak RSS is the baseline),
# then with the destinations. Reports the exporter's CPU share, its peak
# RSS and that RSS minus the baseline (the exporter's own part), and
# /metrics scrape time and size. Per-hop series are off (hops: false) when
# the binary knows the key. Loopback only; everything it starts it stops.
#   usage: scripts/bench-exporter.sh [seconds=150] [destinations=10000]
#   SRC=<checkout> builds another tree (a before/after comparison).
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
src=${SRC:-$here}
secs=${1:-150}
n=${2:-10000}
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && { kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; }; rm -rf "$work"' EXIT

python3 /work/shared/tools/gen_fattree.py 128 64 80 > "$work/fabric.net" 2>/dev/null ||
	python3 ../shared/tools/gen_fattree.py 128 64 80 > "$work/fabric.net"
hops=""
grep -q 'yaml:"hops"' "$src"/collector/config/*.go && hops=", hops: false"
# LIDs: 192 switches first (1..192), then the hosts from 193 (sim order).
config() {
	echo "interval: 60s"
	echo "timeout: 500ms"
	echo "retries: 1"
	echo "concurrency: 32"
	if [ "$1" -eq 0 ]; then echo "destinations: []"; return; fi
	echo "destinations:"
	for ((i = 0; i < $1; i++)); do echo "  - {name: d$i, lid: $((194 + i))$hops}"; done
}
config 0 > "$work/baseline.yml"
config "$n" > "$work/config.yml"
(cd "$src" && CGO_ENABLED=0 go build -o "$work/ibtracer_exporter" .)
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
hwm() { awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status"; }
start() {
	port=$((20000 + RANDOM % 20000))
	"$work/ibtracer_exporter" --config.file="$1" --web.listen-address="127.0.0.1:$port" \
		--ib.transport=sim --sim.topology="$work/fabric.net" --sim.agents=all --log.level=error &
	pid=$!
	until curl -sf "127.0.0.1:$port/-/healthy" > /dev/null; do sleep 0.5; done
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }

# The fabric alone: no destination, the same settle time as a scrape sees.
start "$work/baseline.yml"
sleep 20
curl -s -o "$work/baseline.txt" "127.0.0.1:$port/metrics"
base=$(hwm)
echo "fabric alone: $(grep -E '^(go_goroutines|go_memstats_(heap_inuse|stack_inuse)_bytes) ' "$work/baseline.txt" | tr '\n' ' ')"
stop

start "$work/config.yml"
start_cpu=$(cpu)
t0=$(date +%s.%N)
sleep "$secs"
end_cpu=$(cpu)
t1=$(date +%s.%N)
echo "destinations: $n, fabric: $(grep -c '^Hca' "$work/fabric.net") CA ports, interval 60s, measured ${secs}s${hops:+, hop series off}"
awk -v c0="$start_cpu" -v c1="$end_cpu" -v t0="$t0" -v t1="$t1" -v hz="$ticks" \
	'BEGIN { printf "cpu share: %.1f%% of one core\n", 100 * (c1 - c0) / hz / (t1 - t0) }'
for i in 1 2 3; do
	curl -s -o "$work/metrics.txt" -w "scrape: %{time_total} s, %{size_download} bytes\n" "127.0.0.1:$port/metrics"
done
peak=$(hwm)
echo "peak RSS: $peak MiB (fabric alone: $base MiB; exporter part: $((peak - base)) MiB)"
echo "series: $(grep -vc '^#' "$work/metrics.txt")"
echo "destinations traced: $(grep -c '^ibtracer_trace_success{.*} 1' "$work/metrics.txt") ok of $n"
grep -E '^ibtracer_mad_(requests|timeouts)_total' "$work/metrics.txt" | head -8
grep -E '^(go_goroutines|go_memstats_(heap_inuse|stack_inuse|sys)_bytes) ' "$work/metrics.txt" || true
