#!/usr/bin/env bash
# One `ibtracer --all --no-validate` against a shell loop of the stock
# `ibtracert SRC LID` over the same CA LIDs, on fattree-128 (24 switches,
# 128 CAs) in ibsim with OpenSM, both from H0-0, alternating round by
# round; prints every round and the medians of the wall times and of the
# per-round ratios (issue 23's goal: at least 100). Also times what a
# run of ours costs before its first trace (process start, attaching to
# ibsim and the SA's list of CA ports), to say where the time goes.
#
# OpenSM runs on a host of its own (ibt-sm, cabled to the first switch,
# as ibsimtest.Options.SMHost does), off every traced path. Abstract
# sockets only (IBSIM_SOCKNAME of its own), a temp dir of its own, every
# process bounded by `timeout` and stopped on exit.
#   usage: scripts/bench-vs-ibtracert.sh [rounds=7]
#   FORMAT=json times `--format=json` (default: text, ibtracer's default).
#   SRC=<checkout> builds ibtracer from another tree (before/after).
#   BASE=<checkout> also builds that tree's ibtracer and runs it in every
#   round, next to ours and the loop: ratios under the same load.
set -euo pipefail
cd "$(dirname "$0")/.."
src=${SRC:-$PWD}
rounds=${1:-7}
format=${FORMAT:-text} # ibtracer's output in the timed rounds: text (its default, as ibtracert prints text) or json
limit=900 # seconds any process may live
work=$(mktemp -d)
ibsim_pid=
sm_pid=
cleanup() {
	for p in $sm_pid $ibsim_pid; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	exec 3>&- 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

lib=$(ls /usr/lib/*/umad2sim/libumad2sim.so /usr/lib/umad2sim/libumad2sim.so 2>/dev/null | head -1 || true)
for t in ibsim opensm ibtracert python3; do
	command -v "$t" > /dev/null || [ -x "/usr/sbin/$t" ] || { echo "missing: $t" >&2; exit 1; }
done
[ -n "$lib" ] || { echo "missing: libumad2sim.so (libumad2sim0)" >&2; exit 1; }
export PATH="$PATH:/usr/sbin"

# The topology with the SM host on one extra port of the first switch.
awk -v sm=ibt-sm '
	!done && match($0, /^Switch[ \t]+[0-9]+[ \t]+"[^"]+"/) {
		n = $2 + 1; split($0, q, "\""); first = q[2]
		sub(/^Switch[ \t]+[0-9]+/, "Switch\t" n); print; printf "[%d]\t\"%s\"[1]\n", n, sm
		done = 1; next
	}
	{ print }
	END { printf "\nHca\t1\t\"%s\"\n[1]\t\"%s\"[%d]\n", sm, first, n }
' testdata/topologies/fattree-128.net > "$work/topo.net"

(cd "$src" && CGO_ENABLED=0 go build -o "$work/ibtracer" ./cmd/ibtracer)
if [ -n "${BASE:-}" ]; then
	(cd "$BASE" && CGO_ENABLED=0 go build -o "$work/ibtracer.base" ./cmd/ibtracer)
fi
export IBSIM_SOCKNAME="vsibt$$_$RANDOM"
mkfifo "$work/console"
(cd "$work" && exec timeout "$limit" ibsim -s "$work/topo.net" < "$work/console" > "$work/ibsim.log" 2>&1) &
ibsim_pid=$!
exec 3> "$work/console" # ibsim's console stays open until we exit
for ((i = 0; i < 400; i++)); do
	grep -q " @$IBSIM_SOCKNAME:ctl@\$" /proc/net/unix && break
	sleep 0.05
done
grep -q " @$IBSIM_SOCKNAME:ctl@\$" /proc/net/unix || { echo "ibsim did not start" >&2; cat "$work/ibsim.log" >&2; exit 1; }
(cd "$work" && exec env LD_PRELOAD="$lib" SIM_HOST=ibt-sm HOME="$work" OSM_CACHE_DIR="$work" OSM_TMP_DIR="$work" \
	timeout "$limit" opensm -f "$work/opensm.log" > "$work/opensm.out" 2>&1) &
sm_pid=$!
for ((i = 0; i < 1200; i++)); do
	[ -e "$work/opensm-subnet.lst" ] && break
	sleep 0.05
done
[ -e "$work/opensm-subnet.lst" ] || { echo "OpenSM did not configure the subnet" >&2; tail "$work/opensm.log" >&2; exit 1; }

ours() { timeout 120 "$work/ibtracer" --ib.transport=ibsim --ibsim.node=H0-0 "$@"; }
ours --all --no-validate --format=json > "$work/first.json" 2>> "$work/ibtracer.err"
read -r srclid lids < <(python3 -c '
import json, sys
rs = json.load(open(sys.argv[1]))
bad = [r["destination"] for r in rs if r["status"] != "ok"]
if bad: sys.exit("not ok: %s" % bad)
src = rs[0]["hops"][0]["lid"]
print(src, " ".join(str(r["dlid"]) for r in rs if r["dlid"] != src))
' "$work/first.json")
n=$(wc -w <<< "$lids")
echo "fattree-128 in ibsim, OpenSM on ibt-sm; from H0-0 (LID $srclid) to $n CA LIDs (the SM host's included); $rounds rounds; ibtracer --format=$format"

# Times are read from bash's own clock ($EPOCHREALTIME), not from a
# `date` process, whose start would count in the command timed.
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", b - a }'; }
: > "$work/rounds"
: > "$work/base-rounds"
med() { # the median of column $1 of stdin
	sort -g -k"$1" | awk -v k="$1" '{ a[NR] = $k } END { print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2 }'
}
for ((r = 1; r <= rounds; r++)); do
	t0=$EPOCHREALTIME
	ours --all --no-validate --format="$format" > "$work/round.out" 2> "$work/round.err"
	t1=$EPOCHREALTIME
	# The loop as one would type it, the environment set once (only
	# ibtracert under libumad2sim: a preloaded `timeout` per process
	# attached to ibsim too, and cost the loop about 10 %), the whole
	# loop bounded as our one process is.
	# In the temp dir: libumad2sim writes a sys-PID tree into the
	# current directory of every process it runs in.
	(cd "$work" && timeout 600 bash -c 'export LD_PRELOAD="$1" SIM_HOST=H0-0 HOME="$2"; for l in $4; do ibtracert "$3" "$l" > /dev/null; done' \
		loop "$lib" "$work" "$srclid" "$lids")
	t2=$EPOCHREALTIME
	a=$(secs "$t0" "$t1") b=$(secs "$t1" "$t2")
	mads=$(cat "$work/round.out" "$work/round.err" | sed -n 's/^totals: .*MADs: \([0-9]*\) sent.*/\1/p') # text: on stdout; JSON: on stderr
	echo "$a $b" >> "$work/rounds"
	printf 'round %d: ibtracer --all %.1f ms (%s MADs), ibtracert loop %.1f ms, ratio %.1f' \
		"$r" "$(awk -v x="$a" 'BEGIN{print 1000*x}')" "$mads" "$(awk -v x="$b" 'BEGIN{print 1000*x}')" \
		"$(awk -v x="$a" -v y="$b" 'BEGIN{print y/x}')"
	if [ -n "${BASE:-}" ]; then
		t3=$EPOCHREALTIME
		timeout 120 "$work/ibtracer.base" --ib.transport=ibsim --ibsim.node=H0-0 --all --no-validate --format="$format" > /dev/null 2>> "$work/ibtracer.err"
		c=$(secs "$t3" "$EPOCHREALTIME")
		echo "$c $b" >> "$work/base-rounds"
		printf '; base %.1f ms, ratio %.1f' "$(awk -v x="$c" 'BEGIN{print 1000*x}')" "$(awk -v x="$c" -v y="$b" 'BEGIN{print y/x}')"
	fi
	echo
done
printf 'median ibtracer --all: %.1f ms\n' "$(med 1 < "$work/rounds" | awk '{ print 1000 * $1 }')"
printf 'median ibtracert loop: %.1f ms\n' "$(med 2 < "$work/rounds" | awk '{ print 1000 * $1 }')"
printf 'median ratio (per round): %.1f\n' "$(awk '{ print $2 / $1 }' "$work/rounds" | med 1)"
if [ -n "${BASE:-}" ]; then
	printf 'median base ibtracer --all: %.1f ms; median ratio (per round): %.1f\n' \
		"$(med 1 < "$work/base-rounds" | awk '{ print 1000 * $1 }')" "$(awk '{ print $2 / $1 }' "$work/base-rounds" | med 1)"
fi

# Where a run of ours spends its time before tracing: median of 5 each.
med5() {
	for i in 1 2 3 4 5; do
		t0=$EPOCHREALTIME
		"$@" > /dev/null 2>&1 || true
		secs "$t0" "$EPOCHREALTIME"
		echo
	done | sort -g | sed -n 3p
}
echo "ibtracer --version (process start): $(awk -v x="$(med5 "$work/ibtracer" --version)" 'BEGIN{printf "%.1f", 1000*x}') ms"
echo "ibtracer -l $srclid (attach, local port, one trace to itself): $(awk -v x="$(med5 ours -l "$srclid" --no-validate)" 'BEGIN{printf "%.1f", 1000*x}') ms"
largs=()
for l in $lids; do largs+=(-l "$l"); done
echo "ibtracer -l ... (the same $n LIDs, without --all's listing): $(awk -v x="$(med5 ours "${largs[@]}" --no-validate --format="$format")" 'BEGIN{printf "%.1f", 1000*x}') ms"
echo "ibtracer --all --no-validate: $(awk -v x="$(med5 ours --all --no-validate --format="$format")" 'BEGIN{printf "%.1f", 1000*x}') ms"

# What bounds a run on this machine: the CPU each process spends on one
# `--all --no-validate` (mean of 10 runs): ours (user + system), and
# ibsim's and OpenSM's, read from /proc (clock ticks). Every MAD crosses
# ibsim, every SA query OpenSM too, all on the same few cores.
ticks() { # utime + stime of the child of a `timeout` wrapper, in ticks
	local c
	c=$(cat "/proc/$1/task/$1/children" 2>/dev/null | awk '{print $1}')
	[ -n "$c" ] && awk '{print $14 + $15}' "/proc/$c/stat" || echo 0
}
hz=$(getconf CLK_TCK)
ib0=$(ticks "$ibsim_pid") sm0=$(ticks "$sm_pid")
TIMEFORMAT='%U %S'
cpu=$( { time (for i in 1 2 3 4 5 6 7 8 9 10; do ours --all --no-validate --format="$format" > /dev/null 2>&1; done); } 2>&1 | tail -1)
ib1=$(ticks "$ibsim_pid") sm1=$(ticks "$sm_pid")
awk -v c="$cpu" -v a="$ib0" -v b="$ib1" -v x="$sm0" -v y="$sm1" -v hz="$hz" 'BEGIN {
	split(c, u, " ")
	printf "CPU per --all run (mean of 10): ibtracer %.1f ms, ibsim %.1f ms, OpenSM %.1f ms; cores: %d\n",
		100 * (u[1] + u[2]), 100 * (b - a) / hz, 100 * (y - x) / hz, '"$(nproc)"'
}'
