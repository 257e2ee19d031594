// Package ibsimtest runs the real peers for tests: the upstream ibsim
// simulator on a topology file, OpenSM under libumad2sim to assign LIDs
// and program the forwarding tables, and the stock infiniband-diags tools
// as oracles. Every process gets its own temporary directory, its own
// IBSIM_SOCKNAME, a bounded lifetime, and is stopped by t.Cleanup.
//
// Outside CI a missing Debian package skips the test with a message
// naming it; with CI=true it fails the test.
package ibsimtest
