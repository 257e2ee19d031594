package ibsimtest

import (
	"strconv"
	"strings"
)

// PerfqueryCounters reads the counters of perfquery's output (any of its
// forms: `perfquery`, `-x`, `-E`, `-D`, `--vlxmitcounters`): each
// "Name:.....value" line, by name; header lines (#) and values that are
// not numbers are left out.
func PerfqueryCounters(out string) map[string]uint64 {
	v := map[string]uint64{}
	for _, l := range strings.Split(out, "\n") {
		name, val, ok := strings.Cut(l, ":")
		if !ok || strings.HasPrefix(l, "#") {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimLeft(val, "."), 0, 64); err == nil {
			v[name] = n
		}
	}
	return v
}
