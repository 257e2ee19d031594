// Package syncbuf is a bytes.Buffer that several goroutines may write and
// read at once: for tests and test harnesses that collect a process's or
// a logger's output (ibmad/ibsim/ibsimtest, logging_test.go).
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer collects what is written to it, safe for concurrent use. The
// zero value is empty and ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
