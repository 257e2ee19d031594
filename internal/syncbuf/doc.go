// Package syncbuf is a bytes.Buffer that several goroutines may write and
// read at once: for tests and test harnesses that collect a process's or
// a logger's output (ibmad/ibsim/ibsimtest, the main package's logging
// tests).
//
// The package is one file:
//   - syncbuf.go: Buffer, a mutex around a bytes.Buffer (Write, String).
package syncbuf
