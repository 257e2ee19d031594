// Package ibopen holds the transport flags that the exporter and the
// ibtracer command share (--ib.transport, --ib.ca, --ib.port,
// --ibsim.node, --sim.*) and opens the transport they select.
package ibopen
