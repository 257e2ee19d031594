package readlimit

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Kind is a kind of file and the most bytes such a file may hold.
type Kind struct {
	Name  string // as the error names it: "node-name-map"
	Limit int64
}

// The kinds of file the programs read, with their bounds
// (docs/runbook.md, "File size limits").
var (
	// Config is the exporter's YAML configuration (tens of thousands of
	// destinations take a few MB).
	Config = Kind{Name: "configuration file", Limit: 16 << 20}
	// NodeNameMap is an OFED node-name-map (a 50,000-node fabric's takes
	// a few MB).
	NodeNameMap = Kind{Name: "node-name-map", Limit: 32 << 20}
	// Thresholds is an ibqueryerrors --threshold-file (a few dozen lines).
	Thresholds = Kind{Name: "threshold file", Limit: 1 << 20}
	// Topology is an ibnetdiscover/ibsim topology file (a 50,000-node
	// fabric's takes tens of MB).
	Topology = Kind{Name: "topology file", Limit: 64 << 20}
	// WebConfig is the exporter-toolkit web configuration (TLS and basic
	// auth).
	WebConfig = Kind{Name: "web configuration file", Limit: 1 << 20}
)

// TooLargeError is a file over its kind's bound.
type TooLargeError struct {
	File string
	Kind Kind
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than %s, the most a %s may hold", e.File, Size(e.Kind.Limit), e.Kind.Name)
}

// ReadFile reads the file at path, or returns a *TooLargeError when it
// holds more than k.Limit bytes. It never reads more than k.Limit+1
// bytes.
func ReadFile(path string, k Kind) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, path, k)
}

// NotRegularError is a file that must be a regular file and is not.
type NotRegularError struct {
	File string
	Mode fs.FileMode // its type bits say what it is
	Kind Kind
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: not a regular file but a %s; a %s must be a regular file", e.File, typeName(e.Mode), e.Kind.Name)
}

// typeName says what a file that is not regular is, for a person.
func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m.IsDir():
		return "directory"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// ReadRegularFile is ReadFile for a file that must be a regular file
// (after symbolic links): anything else (a FIFO, a device, a directory, a
// socket) is a *NotRegularError, returned at once. The file is looked at
// before it is opened, so a device is never opened, and opened without
// waiting (O_NONBLOCK), so a FIFO put in its place meanwhile cannot block
// open(2) for want of a writer; what was opened is looked at again.
func ReadRegularFile(path string, k Kind) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &NotRegularError{File: path, Mode: st.Mode(), Kind: k}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &NotRegularError{File: path, Mode: st.Mode(), Kind: k}
	}
	return read(f, path, k) // O_NONBLOCK does nothing to a regular file's reads
}

// read reads f, opened from path, with k's bound.
func read(f *os.File, path string, k Kind) ([]byte, error) {
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > k.Limit {
		return nil, &TooLargeError{File: path, Kind: k}
	}
	b, err := io.ReadAll(io.LimitReader(f, k.Limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > k.Limit {
		return nil, &TooLargeError{File: path, Kind: k}
	}
	return b, nil
}

// Size writes a bound for a person: "16 MiB", "64 KiB", "100 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
