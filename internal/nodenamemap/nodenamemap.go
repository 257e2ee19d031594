package nodenamemap

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ibtracer/ibtracer_exporter/internal/fabricstr"
	"github.com/ibtracer/ibtracer_exporter/internal/readlimit"
)

// Map is a parsed node-name map: node GUID to site name, each name made
// printable valid UTF-8 by the rule of docs/architecture.md ("Strings
// from the fabric") and cut to MaxName bytes. The zero Map (nil) maps
// nothing.
type Map map[uint64]string

// Error is a line the parser could not read.
type Error struct {
	File string
	Line int
	Text string
}

func (e *Error) Error() string {
	text := fmt.Sprintf("%q", cut(e.Text))
	if len(e.Text) > MaxName {
		text += fmt.Sprintf("… (%d bytes)", len(e.Text))
	}
	return fmt.Sprintf("%s:%d: not a node-name-map line (want 0xGUID \"name\"): %s", e.File, e.Line, text)
}

// Load reads the map at path; a file over readlimit.NodeNameMap's bound
// is refused (docs/runbook.md, "File size limits").
func Load(path string) (Map, error) {
	b, err := readlimit.ReadFile(path, readlimit.NodeNameMap)
	if err != nil {
		return nil, err
	}
	return Parse(path, bytes.NewReader(b))
}

// Parse reads a map from r; file names it in errors.
func Parse(file string, r io.Reader) (Map, error) {
	m := Map{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimLeft(sc.Text(), " \t\r\v\f")
		if line == "" || line[0] == '#' {
			continue
		}
		end := strings.IndexAny(line, " \t\r\v\f#")
		if end < 0 {
			end = len(line)
		}
		guid, err := strconv.ParseUint(line[:end], 0, 64)
		if err != nil {
			return nil, &Error{File: file, Line: n, Text: sc.Text()}
		}
		name := strings.TrimLeft(line[end:], " \t\r\v\f")
		name = strings.TrimLeft(name, "\"#")
		if i := strings.IndexAny(name, "\"#"); i >= 0 {
			name = name[:i]
		}
		name = cut(fabricstr.String(strings.TrimRight(name, "\r\n")))
		if name == "" {
			continue
		}
		if _, dup := m[guid]; !dup {
			m[guid] = name
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return m, nil
}

// Name returns the site name of the node with GUID guid, or "" when the
// map has none.
func (m Map) Name(guid uint64) string { return m[guid] }

// MaxName is the most bytes a name keeps, as a node description holds 64
// (NodeDescription): a name goes into labels, log lines and pages, and a
// 100 kB one went into every one of them whole.
const MaxName = 64

// cut cuts s to MaxName bytes, at a character's start.
func cut(s string) string {
	if len(s) <= MaxName {
		return s
	}
	n := MaxName
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
