//go:build !linux

package main

import "io"

// isTerminal: progress is shown on Linux terminals only.
var isTerminal = func(io.Writer) bool { return false }
