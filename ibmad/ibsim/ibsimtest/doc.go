// Package ibsimtest runs the real peers for tests: the upstream ibsim
// simulator on a topology file, OpenSM under libumad2sim to assign LIDs
// and program the forwarding tables, and the stock infiniband-diags tools
// as oracles. Every process gets its own temporary directory, its own
// IBSIM_SOCKNAME, a bounded lifetime, and is stopped by t.Cleanup.
//
// A test starts a fabric on a topology file and attaches an engine to one
// of its nodes:
//
//	fab := ibsimtest.Start(t, "testdata/fattree-mini.net", ibsimtest.Options{})
//	e := ibmad.NewEngine(fab.Dial("H0-0", false), ibmad.Options{})
//	defer e.Close()
//	out, err := fab.Tool("H0-0", "ibnetdiscover") // the oracle, as a node
//
// Start (through Require) skips the test under -short: go test -short
// starts no peer.
//
// Outside CI a missing Debian package skips the test with a message
// naming it; with CI=true it fails the test.
package ibsimtest
