#!/usr/bin/env bash
# Soak test of the exporter (not in CI): the built-in simulated fabric with
# random faults (--ib.transport=sim --sim.faults: the demo fat tree of 4
# leaves, 2 spines, 4 hosts per leaf; the exporter runs on H0-0, LID 7),
# 200 destinations traced every second, for a duration (default 10m).
# Every 30 s it samples the exporter's RSS (/proc), go_goroutines and
# process_open_fds (/metrics) into a TSV; at the end it prints the series
# and, over the last half of the run, each column's growth and slope.
# Loopback only; everything it starts it stops.
#   usage: scripts/soak.sh [duration=10m]   (e.g. 3m, 600s, 1h, 600)
#   SOAK_SAMPLE=30 (seconds between samples), SOAK_KEEP=1 keeps the work dir.
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
printf 't_s\trss_kib\tgo_goroutines\tprocess_open_fds\ttraces_ok\n' > "$tsv"
metric() { awk -v m="$1" '$1 == m { print $2; exit }' "$work/metrics.txt"; }
sample() {
	local t=$1 rss
	if ! kill -0 "$pid" 2> /dev/null; then
		echo "soak: the exporter died at ${t}s; its log:" >&2
		tail -20 "$work/exporter.log" >&2
		exit 1
	fi
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
	if ! curl -sf -m 10 -o "$work/metrics.txt" "http://127.0.0.1:$port/metrics"; then
		echo "soak: /metrics did not answer at ${t}s" >&2
		exit 1
	fi
	local ok
	ok=$(awk '/^ibtracer_traces_total\{.*result="ok"/ { s += $2 } END { printf "%d", s }' "$work/metrics.txt")
	printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$rss" "$(metric go_goroutines)" "$(metric process_open_fds)" "$ok" >> "$tsv"
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
echo "# last half (t >= $((secs / 2))s): growth from its first to its last sample, least-squares slope"
awk -F'\t' -v half=$((secs / 2)) '
NR == 1 { for (i = 2; i <= NF; i++) name[i] = $i; cols = NF; next }
$1 >= half {
	n++
	for (i = 2; i <= cols; i++) {
		if (n == 1) first[i] = $i
		last[i] = $i
		sx[i] += $1; sy[i] += $i; sxx[i] += $1 * $1; sxy[i] += $1 * $i
	}
}
END {
	if (n < 2) { print "not enough samples in the last half"; exit 1 }
	for (i = 2; i <= cols; i++) {
		d = n * sxx[i] - sx[i] * sx[i]
		slope = d ? (n * sxy[i] - sx[i] * sy[i]) / d * 60 : 0
		growth = first[i] ? 100 * (last[i] - first[i]) / first[i] : 0
		if (name[i] == "traces_ok")
			printf "%-18s %d -> %d (%.1f per second: the traces keep succeeding)\n", name[i], first[i], last[i], slope / 60
		else
			printf "%-18s %s -> %s  growth %+.2f%%  slope %+.2f per minute\n", name[i], first[i], last[i], growth, slope
	}
}' "$tsv"
echo
echo "# exporter log: $(grep -c . "$work/exporter.log" || true) lines; warnings and errors by message:"
grep -o 'msg="[^"]*"' "$work/exporter.log" | sort | uniq -c | sort -rn | head -10 || true
