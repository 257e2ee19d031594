// Package connlimit bounds the connections an HTTP server keeps open, so
// that idle keep-alive connections cannot use up the process's file
// descriptors, and makes room for a new connection by closing the one
// that has waited longest for a request, idle keep-alive connections
// first (docs/architecture.md, "HTTP server limits").
//
// The package is one file:
//   - connlimit.go: Limiter (New, Listen, ConnState), the wrapped listener
//     and connections, and the choice of which waiting connection to close.
package connlimit
