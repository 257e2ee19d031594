// Package fakeclock is a clock for tests whose time moves only when the
// test advances it: Now, Timer channels and AfterFunc functions that fire
// when Advance (or Add) passes their time. It implements ibmad.Clock, the
// module's one clock (docs/architecture.md, "One clock"), so it drives
// the exporter's scheduler, the engine's MAD budget, the hosted agent's
// rate limit and the tracer's caches alike.
//
// The package is one file:
//   - fakeclock.go: Clock (New, Now, Timer, AfterFunc) and the test's
//     controls: Advance, Add, Next, Pending and WaitPending.
package fakeclock
