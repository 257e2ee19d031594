#!/usr/bin/env bash
# Capacity benchmark of the exporter: 10,000 destinations on a simulated
# fabric of 10,240 CA ports (a two-level fat tree of 128 leaves, 64 spines,
# 80 hosts per leaf), traced every 60 s, agents on every node.
#
# The fabric runs in a process of its own (cmd/ibtracer-fabric: the
# simulated fabric, its agents, served over ibsim's socket protocol), and
# the exporter attaches to it with --ib.transport=ibsim, so the exporter
# process's peak RSS (VmHWM) and CPU are the exporter's alone; the
# fabric's are reported apart. Also reports /metrics scrape time and size.
# Per-hop series are off (hops: false) when the binary knows the key.
# Loopback and abstract sockets only; everything it starts it stops.
#   usage: scripts/bench-exporter.sh [seconds=150] [destinations=10000]
#   SRC=<checkout> builds the exporter from another tree (a before/after
#   comparison); the fabric is always built from this one.
#   FABRIC_HEAP=<file> writes the fabric process's heap profile there.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
src=${SRC:-$here}
secs=${1:-150}
n=${2:-10000}
work=$(mktemp -d)
pid=
fpid=
cleanup() {
	for p in $pid $fpid; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

hops=""
grep -q 'yaml:"hops"' "$src"/collector/config/*.go && hops=", hops: false"
# LIDs: 192 switches first (1..192), then the hosts from 193 (sim order);
# the exporter attaches at the first host (LID 193).
{
	echo "interval: 60s"
	echo "timeout: 500ms"
	echo "retries: 1"
	echo "concurrency: 32"
	echo "destinations:"
	for ((i = 0; i < n; i++)); do echo "  - {name: d$i, lid: $((194 + i))$hops}"; done
} > "$work/config.yml"
(cd "$src" && CGO_ENABLED=0 go build -o "$work/ibtracer_exporter" .)
CGO_ENABLED=0 go build -o "$work/ibtracer-fabric" ./cmd/ibtracer-fabric
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
mib() { awk -v k="$2:" '$1 == k {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
export IBSIM_SOCKNAME="bench$$_$RANDOM"

"$work/ibtracer-fabric" --sim.fattree=128,64,80 --sim.agents=all ${FABRIC_HEAP:+--heap.profile="$FABRIC_HEAP"} \
	> "$work/fabric.log" 2>&1 &
fpid=$!
for ((i = 0; i < 600; i++)); do
	grep -q '^ibtracer-fabric: serving' "$work/fabric.log" && break
	kill -0 "$fpid" 2>/dev/null || { cat "$work/fabric.log"; exit 1; }
	sleep 0.5
done
grep -q '^ibtracer-fabric: serving' "$work/fabric.log" || { echo "the fabric did not start"; cat "$work/fabric.log"; exit 1; }
fabric_ready=$(mib "$fpid" VmRSS)

port=$((20000 + RANDOM % 20000))
"$work/ibtracer_exporter" --config.file="$work/config.yml" --web.listen-address="127.0.0.1:$port" \
	--ib.transport=ibsim --log.level=error &
pid=$!
until curl -sf "127.0.0.1:$port/-/healthy" > /dev/null; do
	kill -0 "$pid" 2>/dev/null || { echo "the exporter exited"; exit 1; }
	sleep 0.5
done
start_cpu=$(cpu "$pid")
fstart_cpu=$(cpu "$fpid")
t0=$(date +%s.%N)
# counts FILE: the traces and the MADs by class a scrape says, one
# "name value" a line ("traces N", "class:smp_dr N", ...).
counts() {
	awk '/^ibtracer_traces_total[{ ]/ { t += $NF }
		/^ibtracer_mad_requests_total[{]/ { match($0, /class="[^"]*"/); c[substr($0, RSTART + 7, RLENGTH - 8)] = $NF }
		END { print "traces", t + 0; for (k in c) print "class:" k, c[k] }' "$1"
}
# The first interval walks every path; the next ones mostly validate the
# paths they know. So besides the whole run's figure, the MADs per
# interval are also counted from the end of the first interval (every
# destination traced once) to the end of the run: the steady state.
steady_from=""
end=$(awk -v t="$t0" -v s="$secs" 'BEGIN { printf "%.3f", t + s }')
while awk -v e="$end" -v now="$(date +%s.%N)" 'BEGIN { exit !(now < e) }'; do
	if [ -z "$steady_from" ] && curl -sf -o "$work/first.txt" "127.0.0.1:$port/metrics" &&
		[ "$(counts "$work/first.txt" | awk '$1 == "traces" { print $2 }')" -ge "$n" ]; then
		steady_from=$(awk -v t="$t0" -v now="$(date +%s.%N)" 'BEGIN { printf "%.0f", now - t }')
		counts "$work/first.txt" > "$work/first.counts"
	fi
	sleep 5 # a scrape of 10,000 destinations costs the exporter about 0.1 s of CPU
done
end_cpu=$(cpu "$pid")
fend_cpu=$(cpu "$fpid")
t1=$(date +%s.%N)
echo "destinations: $n, fabric: 10240 CA ports, interval 60s, measured ${secs}s${hops:+, hop series off}"
share() {
	awk -v c0="$1" -v c1="$2" -v t0="$t0" -v t1="$t1" -v hz="$ticks" \
		'BEGIN { printf "%.1f%% of one core", 100 * (c1 - c0) / hz / (t1 - t0) }'
}
echo "exporter cpu share: $(share "$start_cpu" "$end_cpu")"
for i in 1 2 3; do
	curl -s -o "$work/metrics.txt" -w "scrape: %{time_total} s, %{size_download} bytes\n" "127.0.0.1:$port/metrics"
done
echo "exporter peak RSS (VmHWM): $(mib "$pid" VmHWM) MiB (now $(mib "$pid" VmRSS) MiB): the exporter's own process"
echo "fabric process (ibtracer-fabric, separate): peak RSS $(mib "$fpid" VmHWM) MiB, $fabric_ready MiB when ready; cpu share $(share "$fstart_cpu" "$fend_cpu")"
echo "series: $(grep -vc '^#' "$work/metrics.txt")"
echo "destinations traced: $(grep -c '^ibtracer_trace_success{.*} 1' "$work/metrics.txt") ok of $n"
grep -E '^ibtracer_mad_(requests|timeouts)_total' "$work/metrics.txt" | head -8
# Per interval: the MADs divided by the intervals traced (traces / destinations,
# the first interval's walks and the fast-path intervals after it together),
# and the traces' mean duration (ibtracer_trace_duration_seconds).
awk -v n="$n" '
	/^ibtracer_traces_total[{ ]/ { traces += $NF }
	/^ibtracer_trace_duration_seconds_sum / { dsum = $NF }
	/^ibtracer_trace_duration_seconds_count / { dcount = $NF }
	/^ibtracer_trace_duration_seconds_bucket[{]/ { match($0, /le="[^"]*"/); nb++; le[nb] = substr($0, RSTART + 4, RLENGTH - 5); cum[nb] = $NF }
	/^ibtracer_mad_requests_total[{]/ { match($0, /class="[^"]*"/); cls[substr($0, RSTART + 7, RLENGTH - 8)] = $NF }
	END {
		iv = traces / n
		printf "traces: %d (%.2f intervals of %d)\n", traces, iv, n
		for (c in cls) if (cls[c] > 0 && iv > 0) printf "MADs per interval, %s: %.0f\n", c, cls[c] / iv
		if (dcount > 0) printf "trace latency: mean %.2f ms over %d traces", 1000 * dsum / dcount, dcount
		for (i = 1; i <= nb && dcount > 0; i++) if (p50 == "" && cum[i] >= dcount / 2) p50 = le[i]
		for (i = 1; i <= nb && dcount > 0; i++) if (p99 == "" && cum[i] >= dcount * 0.99) p99 = le[i]
		if (dcount > 0) printf "; median <= %s s, p99 <= %s s (histogram bucket bounds)\n", p50, p99
	}' "$work/metrics.txt"
counts "$work/metrics.txt" > "$work/last.counts"
if [ -n "$steady_from" ]; then
	awk -v n="$n" -v from="$steady_from" '
		FNR == NR { a[$1] = $2; next }
		{ b[$1] = $2 }
		END {
			iv = (b["traces"] - a["traces"]) / n
			printf "steady state (from %d s, when every destination had been traced once): %.2f intervals", from, iv
			if (iv > 0) for (k in b) if (k != "traces" && b[k] > a[k]) printf ", %s per interval %.0f", substr(k, 7), (b[k] - a[k]) / iv
			print ""
		}' "$work/first.counts" "$work/last.counts"
else
	echo "steady state: not reached (not every destination was traced once within ${secs}s)"
fi
grep -E '^(go_goroutines|go_memstats_(heap_inuse|stack_inuse|sys)_bytes) ' "$work/metrics.txt" || true
