#!/usr/bin/env bash
# The fleet at 10,000 nodes, in one process (docs/architecture.md, "Load
# on one switch"; docs/metrics.md, "Fleet verdict", "At scale"):
#
#  1. load: an exporter (scheduler, tracer, validation, discovery by
#     LID, hosted agent; health and evidence too with
#     IBTRACER_FLEET_HEALTH=1) with the packaged configuration,
#     packaging/ibtracer.yml, on every host of a simulated fat tree of
#     10,000 CA ports (250 leaves of 40 hosts, 36 spines), all started at
#     once on one step clock: 4 simulated minutes of restart, then 6 of
#     steady state. Prints the busiest switch's mean and peak SMPs/s, the
#     SA's MADs/s in steady state and in the restart, and the MADs per
#     exporter per interval, and checks the budgets
#     (collector/fleetscale_test.go, TestFleetAtScaleFull).
#  2. time to blame: the fleet verdict of test/localize at 1,000 or
#     10,000 exporters with the packaged sample (8) and interval (60 s),
#     TRIALS trials per fault kind; checks that the right link ranks
#     first within 2 intervals (3 for drop) in 95 % of the trials and that
#     a healthy fabric blames nothing (TestFleetLocalization -loc.scale).
#
#   usage: scripts/bench-fleet.sh [load|blame|all=all]
#   LOC_SCALE=10k|1k (default 10k), TRIALS=<n> (default 3).
# Nothing leaves the process: no socket, no file but the test binaries.
# On the 2 shared, loaded cores of the development machine the load part
# took 14 to 25 minutes and 3 GB; the fleet verdict at 1,000 exporters
# about 45 s per trial (all six kinds) on idle cores, 20 trials 48
# minutes on loaded ones (26 minutes of CPU); at 10,000 2 trials took
# 52 minutes on loaded cores (31 minutes of CPU) and 7.5 GB.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
scale=${LOC_SCALE:-10k}
trials=${TRIALS:-3}
case $what in
load|all) ;;
blame) ;;
*) echo "usage: $0 [load|blame|all]" >&2; exit 2 ;;
esac
if [ "$what" != blame ]; then
	IBTRACER_FLEET_FULL=1 go test -count=1 -timeout 120m -run '^TestFleetAtScaleFull$' -v ./collector/
fi
if [ "$what" != load ]; then
	go test -count=1 -timeout 600m -run '^TestFleetLocalization$' -v ./test/localize/ \
		-args -loc.scale="$scale" -loc.trials="$trials" | grep -v 'evidence [0-9a-f]*$'
fi
