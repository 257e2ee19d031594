// Package ibopen holds the transport flags that the exporter and the
// ibtracer command share (--ib.transport, --ib.ca, --ib.port,
// --ibsim.node, --sim.*) and opens the transport they select.
//
// The package is one file:
//   - ibopen.go: Config and its flags (AddFlags, AddSimFlags), Open (umad,
//     ibsim or the in-process sim), OpenFabric and the simulated agents it
//     starts, Opened, and DemoTopology, the fabric used without a file.
package ibopen
