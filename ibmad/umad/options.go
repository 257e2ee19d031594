package umad

import "time"

// Options select the port.
type Options struct {
	// CA and Port as the OFED tools' -C/-P: empty and 0 choose as they do.
	CA   string
	Port int
	// Sysfs and DevDir default to /sys and /dev/infiniband (tests point
	// them at fixtures).
	Sysfs  string
	DevDir string
	// ReopenInterval is how often a lost device is looked for; default 1s.
	ReopenInterval time.Duration
}
