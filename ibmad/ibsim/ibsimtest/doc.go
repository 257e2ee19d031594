// Package ibsimtest runs the real peers for tests: the upstream ibsim
// simulator on a topology file, OpenSM under libumad2sim to assign LIDs
// and program the forwarding tables, and the stock infiniband-diags tools
// as oracles. Every process gets its own temporary directory, its own
// IBSIM_SOCKNAME, a bounded lifetime, and is stopped by t.Cleanup.
//
// Outside CI a missing Debian package skips the test with a message
// naming it; with CI=true it fails the test.
//
// What each file holds:
//   - ibsimtest.go: Require and Umad2sim (the Debian packages), Options and
//     Fabric: Start (ibsim, then OpenSM, waiting for its socket and for the
//     SM), Restart, Resume and Kill, the tools run as a node (Env, Tool,
//     ToolEnv, StartTool), Console, and Options and Dial for an ibmad/ibsim
//     transport on a node.
//   - restart.go: KillSM, StartSM and StartSMArgs, the SM stopped and
//     started again on a running fabric.
//   - mcast.go: MGID and Fabric.Join, multicast groups joined from one
//     ibsim client per member, so that OpenSM programs the MFTs.
//   - mcmember.go: MCMemberRecord and Join, the SA Set that joins (or
//     creates) a multicast group.
package ibsimtest
