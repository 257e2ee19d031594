// Package ibopen holds the transport flags that the exporter and the
// ibtracer command share (--ib.transport, --ib.ca, --ib.port,
// --ibsim.node, --sim.*) and opens the transport they select.
//
// What each file holds:
//   - ibopen.go: Config and its flags (AddFlags, AddSimFlags), Open (umad,
//     ibsim or the in-process sim), OpenFabric and the simulated agents it
//     starts, Opened, and DemoTopology, the fabric used without a file.
//   - mcast.go: --sim.multicast's groups (their MFTs programmed)
//   - subnet.go: --sim.remote-subnet's router and second subnet
//     (withRouter, joinRemote, RemoteRouter).
package ibopen
