// Package promtest holds what tests that run a real Prometheus (and its
// tools) share: dashboards/ and test/e2e/. No product code imports it.
//
// The package is one file:
//   - promtest.go: RequireTool (find a Debian program or skip) and Query
//     (run an instant query on a Prometheus and count the series).
package promtest
