package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal says whether w is a terminal (progress is shown only there,
// never when stderr is piped or redirected). A variable for the tests.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
