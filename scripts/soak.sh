#!/usr/bin/env bash
# Soak test of the exporter (not in CI): the built-in simulated fabric with
# random faults (--ib.transport=sim --sim.faults: the demo fat tree of 4
# leaves, 2 spines, 4 hosts per leaf; the exporter runs on H0-0, LID 7),
# 200 destinations traced every second, for a duration (default 10m).
# Every 30 s it samples, from /metrics, the exporter's RSS
# (process_resident_memory_bytes), its live heap (go_gc_heap_live_bytes:
# what the last GC marked live), its heap in use
# (go_memstats_heap_inuse_bytes), go_goroutines and process_open_fds into
# a TSV; at the end it prints the series and, over the last half of the
# run, each column's growth and least-squares slope, and a verdict.
#
# The verdict is on the live heap, goroutines and open fds: each must grow
# less than 1 % over the last half, growth being the least-squares slope
# times the half's length over the half's mean (a first-to-last difference
# would judge two samples' GC noise). RSS is reported, not judged: the Go
# runtime sizes the heap to twice the live data (GOGC=100) and returns
# freed pages to the OS lazily, so RSS follows the largest heap goal seen
# so far and keeps creeping up for a while after the live data is flat;
# a leak shows in the live heap first.
# Loopback only; everything it starts it stops. Exit status: 0 flat, 1 a
# failure (the exporter died, /metrics did not answer, too few samples),
# 3 growth, 4 the traces stopped succeeding.
#   usage: scripts/soak.sh [duration=10m]   (e.g. 3m, 600s, 1h, 600)
#   SOAK_SAMPLE=30 (seconds between samples), SOAK_KEEP=1 keeps the work dir,
#   SOAK_LIMIT=1 (the growth, in %, the verdict allows).
set -euo pipefail
cd "$(dirname "$0")/.."

dur=${1:-10m}
case "$dur" in
*h) secs=$((${dur%h} * 3600)) ;;
*m) secs=$((${dur%m} * 60)) ;;
*s) secs=${dur%s} ;;
*) secs=$dur ;;
esac
if ! [[ "$secs" =~ ^[0-9]+$ ]] || ((secs < 60)); then
	echo "soak: duration $dur: want at least 60s (forms: 10m, 600s, 1h, 600)" >&2
	exit 2
fi
step=${SOAK_SAMPLE:-30}

work=$(mktemp -d)
pid=
cleanup() {
	if [[ -n "$pid" ]]; then
		kill "$pid" 2> /dev/null || true
		wait "$pid" 2> /dev/null || true
	fi
	if [[ -n "${SOAK_KEEP:-}" ]]; then echo "soak: work dir kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# The demo fabric's LIDs: switches 1..6 (S0, S1, L0..L3), hosts 7..22 in
# order (H0-0 = 7 is the exporter itself). 200 destinations cycle over the
# 21 others; each has its own name, so each is its own scheduled trace.
{
	echo "interval: 1s"
	echo "timeout: 100ms"
	echo "retries: 1"
	echo "concurrency: 16"
	echo "destinations:"
	for ((i = 0; i < 200; i++)); do
		lid=$((1 + i % 21))
		((lid >= 7)) && lid=$((lid + 1))
		echo "  - {name: d$i, lid: $lid, labels: {rack: r$((i % 8))}}"
	done
} > "$work/soak.yml"

CGO_ENABLED=0 go build -o "$work/ibtracer_exporter" .
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$work/ibtracer_exporter" --config.file="$work/soak.yml" --web.listen-address="127.0.0.1:$port" \
	--ib.transport=sim --sim.faults --log.level=warn 2> "$work/exporter.log" &
pid=$!

deadline=$((SECONDS + 60))
until curl -sf "http://127.0.0.1:$port/-/healthy" > /dev/null; do
	if ! kill -0 "$pid" 2> /dev/null || ((SECONDS > deadline)); then
		echo "soak: the exporter did not come up; its log:" >&2
		tail -20 "$work/exporter.log" >&2
		exit 1
	fi
	sleep 0.5
done

tsv="$work/soak.tsv"
printf 't_s\trss_kib\theap_live_kib\theap_inuse_kib\tgo_goroutines\tprocess_open_fds\ttraces_ok\n' > "$tsv"
# metric NAME [DIV]: the sample's value (divided by DIV, rounded); "NA"
# when /metrics lacks it.
metric() {
	awk -v m="$1" -v div="${2:-1}" '$1 == m { printf "%.0f", $2 / div; found = 1; exit } END { if (!found) print "NA" }' "$work/metrics.txt"
}
sample() {
	local t=$1
	if ! kill -0 "$pid" 2> /dev/null; then
		echo "soak: the exporter died at ${t}s; its log:" >&2
		tail -20 "$work/exporter.log" >&2
		exit 1
	fi
	if ! curl -sf -m 10 -o "$work/metrics.txt" "http://127.0.0.1:$port/metrics"; then
		echo "soak: /metrics did not answer at ${t}s" >&2
		exit 1
	fi
	local ok
	ok=$(awk '/^ibtracer_traces_total\{.*result="ok"/ { s += $2 } END { printf "%d", s }' "$work/metrics.txt")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$(metric process_resident_memory_bytes 1024)" \
		"$(metric go_gc_heap_live_bytes 1024)" "$(metric go_memstats_heap_inuse_bytes 1024)" \
		"$(metric go_goroutines)" "$(metric process_open_fds)" "$ok" >> "$tsv"
}

echo "soak: exporter pid $pid on 127.0.0.1:$port, 200 destinations at 1s, ${secs}s, a sample every ${step}s" >&2
start=$SECONDS
next=0
while :; do
	now=$((SECONDS - start))
	if ((now >= next)); then
		sample "$next"
		next=$((next + step))
		((next > secs)) && break
	fi
	sleep 1
done

echo "# series (${secs}s, a sample every ${step}s)"
column -t -s $'\t' "$tsv" 2> /dev/null || cat "$tsv"
echo
echo "# last half (t >= $((secs / 2))s): first -> last sample; growth = least-squares slope x the half's length / the half's mean"
verdict=0
awk -F'\t' -v half=$((secs / 2)) -v limit="${SOAK_LIMIT:-1}" '
NR == 1 { for (i = 2; i <= NF; i++) name[i] = $i; cols = NF; next }
$1 >= half {
	n++
	if (n == 1) t0 = $1
	t1 = $1
	for (i = 2; i <= cols; i++) {
		if ($i == "NA") na[i] = 1
		if (n == 1) first[i] = $i
		last[i] = $i
		sx[i] += $1; sy[i] += $i; sxx[i] += $1 * $1; sxy[i] += $1 * $i
	}
}
END {
	if (n < 3) { print "not enough samples in the last half"; exit 1 }
	bad = 0
	for (i = 2; i <= cols; i++) {
		if (na[i]) { printf "%-18s not in /metrics\n", name[i]; if (name[i] == "heap_live_kib") missing = 1; continue }
		d = n * sxx[i] - sx[i] * sx[i]
		slope = d ? (n * sxy[i] - sx[i] * sy[i]) / d : 0 # per second
		mean = sy[i] / n
		growth = mean ? 100 * slope * (t1 - t0) / mean : 0
		if (name[i] == "traces_ok") {
			printf "%-18s %d -> %d (%.1f per second: the traces keep succeeding)\n", name[i], first[i], last[i], slope
			if (slope <= 0) stalled = 1
			continue
		}
		judged = name[i] == "heap_live_kib" || name[i] == "go_goroutines" || name[i] == "process_open_fds"
		mark = !judged ? "(not judged)" : growth < limit ? "ok" : "GROWS"
		if (judged && growth >= limit) bad = 1
		printf "%-18s %s -> %s  growth %+.2f%%  slope %+.1f per minute  %s\n", name[i], first[i], last[i], growth, slope * 60, mark
	}
	exit missing ? 1 : stalled ? 4 : bad ? 3 : 0
}' "$tsv" || verdict=$?
echo
echo "# exporter log: $(grep -c . "$work/exporter.log" || true) lines; warnings and errors by message:"
grep -o 'msg="[^"]*"' "$work/exporter.log" | sort | uniq -c | sort -rn | head -10 || true
echo
case $verdict in
0) echo "soak: FLAT (live heap, goroutines and open fds each grew less than ${SOAK_LIMIT:-1}% over the last half)" ;;
3) echo "soak: GROWTH (see the columns marked GROWS)" ;;
4) echo "soak: the traces stopped succeeding: no verdict" ;;
*) echo "soak: no verdict" ;;
esac
exit "$verdict"
