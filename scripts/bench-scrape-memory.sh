#!/usr/bin/env bash
# Memory per /metrics scrape at scale: 10,000 destinations with hop
# series, health (counters on) and link evidence on, on the simulated
# 10,240-port fat tree of bench-exporter.sh (the fabric in a process of
# its own, the exporter attached over ibsim's socket protocol). After
# the time to trace every destination, it reports the exporter's RSS
# when idle, its peak RSS (VmHWM, reset first) during that many
# concurrent scrapes, and the heap in use 10 s after (docs/exporter.md,
# "Scrape memory").
# Loopback and abstract sockets only; everything it starts it stops.
#   usage: scripts/bench-scrape-memory.sh [destinations=10000] [seconds-to-trace=300] [scrapes=4]
#   SRC=<checkout> builds the exporter from another tree (before/after).
#   GZIPPED=1 asks the answers gzip'd, as Prometheus does (default: text).
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
src=${SRC:-$here}
n=${1:-10000}
wait=${2:-300}
scrapes=${3:-4}
work=$(mktemp -d)
pid=
fpid=
cleanup() {
	for p in $pid $fpid; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

{
	echo "interval: 600s"
	echo "timeout: 500ms"
	echo "retries: 1"
	echo "concurrency: 32"
	echo "health: {enabled: true, counters: true}"
	echo "evidence: {enabled: true}"
	echo "destinations:"
	for ((i = 0; i < n; i++)); do echo "  - {name: d$i, lid: $((194 + i))}"; done
} > "$work/config.yml"
(cd "$src" && CGO_ENABLED=0 go build -o "$work/ibtracer_exporter" .)
CGO_ENABLED=0 go build -o "$work/ibtracer-fabric" ./cmd/ibtracer-fabric
mib() { awk -v k="$2:" '$1 == k {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
export IBSIM_SOCKNAME="scrmem$$_$RANDOM"

"$work/ibtracer-fabric" --sim.fattree=128,64,80 --sim.agents=all > "$work/fabric.log" 2>&1 &
fpid=$!
for ((i = 0; i < 600; i++)); do
	grep -q '^ibtracer-fabric: serving' "$work/fabric.log" && break
	kill -0 "$fpid" 2>/dev/null || { cat "$work/fabric.log"; exit 1; }
	sleep 0.5
done
port=$((20000 + RANDOM % 20000))
"$work/ibtracer_exporter" --config.file="$work/config.yml" --web.listen-address="127.0.0.1:$port" \
	--ib.transport=ibsim --log.level=error --web.max-requests=4 &
pid=$!
until curl -sf "127.0.0.1:$port/-/healthy" > /dev/null; do
	kill -0 "$pid" 2>/dev/null || { echo "the exporter exited"; exit 1; }
	sleep 0.5
done
# No scrape before the measurement: a scrape's memory stays with the
# process (the Go runtime keeps it), so the idle figure would include it.
sleep "$wait"
idle=$(mib "$pid" VmRSS)
echo 5 > "/proc/$pid/clear_refs" # VmHWM := VmRSS
pids=()
enc=()
[ -n "${GZIPPED:-}" ] && enc=(-H 'Accept-Encoding: gzip')
for ((i = 0; i < scrapes; i++)); do
	curl -s "${enc[@]}" -o "$work/m$i.txt" "127.0.0.1:$port/metrics" &
	pids+=($!)
done
wait "${pids[@]}"
peak=$(mib "$pid" VmHWM)
sleep 10
curl -s -o "$work/metrics.txt" "127.0.0.1:$port/metrics"
traced=$(awk '/^ibtracer_traces_total[{ ]/ { t += $NF } END { print t + 0 }' "$work/metrics.txt")
echo "destinations: $n (hop series, health with counters, evidence), $traced traces after ${wait}s"
if [ -n "${GZIPPED:-}" ]; then
	echo "gzip'd /metrics: $(wc -c < "$work/m0.txt") bytes"
	gzip -dc < "$work/m0.txt" > "$work/m0.txt.d" && mv "$work/m0.txt.d" "$work/m0.txt"
fi
echo "series: $(grep -vc '^#' "$work/m0.txt"), /metrics: $(wc -c < "$work/m0.txt") bytes"
echo "$scrapes concurrent scrape(s): RSS idle $idle MiB, peak $peak MiB: +$((peak - idle)) MiB"
awk '/^go_memstats_heap_inuse_bytes / {printf "heap in use 10 s after: %.0f MiB\n", $2 / 1048576}' "$work/metrics.txt"
