package collector

import (
	"hash/fnv"
	"time"
)

// phase is the destination's deterministic offset within its interval:
// a hash of the exporter's identity (its port GUID) and the destination,
// so that a fabric of exporters spreads its traces over the interval.
func phase(seed, name string, interval time.Duration) time.Duration {
	h := fnv.New64a()
	_, _ = h.Write([]byte(seed))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(name))
	if interval <= 0 {
		return 0
	}
	return time.Duration(h.Sum64() % uint64(interval))
}

// nextRun returns the first time after now that sits at phase within the
// interval grid anchored at the Unix epoch.
func nextRun(now time.Time, interval, ph time.Duration) time.Time {
	base := now.Truncate(interval).Add(ph)
	for !base.After(now) {
		base = base.Add(interval)
	}
	return base
}

func minDuration(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}
