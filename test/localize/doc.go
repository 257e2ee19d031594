// Package localizeeval evaluates the fleet verdict (docs/metrics.md,
// "Fleet verdict"): many exporters on one in-process fat tree, each
// tracing and checking the health of the sample of destinations a
// `discover: [{all: true, sample: N}]` selector draws, one interval after
// another on a fake clock, with one fault injected per trial; the
// verdict (the Go mirror of dashboards/ibtracer.rules.yml, checked
// against the rules by promtool) must name the faulty link.
//
//	go test -run TestFleetLocalization -v -loc.trials=20 ./test/localize
//
// prints the table of docs/metrics.md. It is not run under -short. A run
// gives the same evidence every time, whatever the load on the machine
// (fixed seeds, drops that do not depend on goroutine order, losses
// reported at once): -v logs a digest of each trial's evidence to compare.
package localizeeval
