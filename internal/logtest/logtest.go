// Package logtest is a go-kit logger for tests that keeps every line it
// is given as a key/value map, safe for concurrent loggers, so that a
// test can ask which lines carried a message:
//
//	var rec logtest.Lines
//	logger := level.NewFilter(log.Logger(&rec), level.AllowInfo())
//	// ... run the code under test with logger ...
//	failing := rec.With("discovery refresh failing; keeping the previous destinations")
//
// No product code imports it.
package logtest

import (
	"fmt"
	"sync"
)

// Lines keeps every line logged to it; the zero value is ready.
type Lines struct {
	mu    sync.Mutex
	lines []map[string]any
}

// Log keeps one line: its keys (as strings) and values.
func (l *Lines) Log(kv ...any) error {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[fmt.Sprint(kv[i])] = kv[i+1]
	}
	l.mu.Lock()
	l.lines = append(l.lines, m)
	l.mu.Unlock()
	return nil
}

// With returns the lines whose msg is one of msgs, in the order logged.
func (l *Lines) With(msgs ...string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, m := range l.lines {
		for _, msg := range msgs {
			if m["msg"] == msg {
				out = append(out, m)
			}
		}
	}
	return out
}
