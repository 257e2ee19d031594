package linkhealth

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibtracer/ibtracer_exporter/internal/readlimit"
)

// ParseLimits reads counter limits in the format of ibqueryerrors'
// --threshold-file: one "CounterName=value" a line, "#" comment lines.
// A counter is over its limit when it is above it. Unknown names are
// errors (a typo must not disable a limit silently).
func ParseLimits(r io.Reader, into map[string]uint64) error {
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if err := ParseLimit(s, into); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
	return sc.Err()
}

// LoadLimits reads the ibqueryerrors threshold file at path into into; a
// file over readlimit.Thresholds' bound is refused. Its errors name the
// file.
func LoadLimits(path string, into map[string]uint64) error {
	b, err := readlimit.ReadFile(path, readlimit.Thresholds)
	if err != nil {
		return err
	}
	if err := ParseLimits(bytes.NewReader(b), into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ParseLimit parses one "CounterName=value" into into.
func ParseLimit(s string, into map[string]uint64) error {
	name, val, ok := strings.Cut(s, "=")
	name, val = strings.TrimSpace(name), strings.TrimSpace(val)
	if !ok {
		return fmt.Errorf("%q is not CounterName=value", s)
	}
	if !IsCounterName(name) {
		return fmt.Errorf("%q is not a counter: use one of %s", name, strings.Join(CounterNames[:], ", "))
	}
	v, err := strconv.ParseUint(val, 0, 64)
	if err != nil {
		return fmt.Errorf("limit of %s: %q is not a non-negative integer", name, val)
	}
	into[name] = v
	return nil
}

// IsCounterName says whether n is one of CounterNames.
func IsCounterName(n string) bool {
	for _, c := range CounterNames {
		if c == n {
			return true
		}
	}
	return false
}
