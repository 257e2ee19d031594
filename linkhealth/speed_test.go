package linkhealth

import (
	"fmt"
	"testing"
)

// TestLaneBitsEverySpeed: review 1 of issue 43, finding 4. One
// convention for every speed: the nominal lane rate, the rate the
// kernel's sysfs `rate` and ibstat report (4X QDR 40 Gb/s, 4X EDR
// 100 Gb/s), used for link_rate_bytes_per_second and the BER's bits
// alike (docs/metrics.md, "Bit error rate"); each parses back.
func TestLaneBitsEverySpeed(t *testing.T) {
	for _, c := range []struct {
		s    Speed
		gbps float64
		x4   string // the 4X rate sysfs shows
	}{
		{SpeedUnknown, 0, ""},
		{SpeedSDR, 2.5, "10 Gb/sec (4X SDR)"},
		{SpeedDDR, 5, "20 Gb/sec (4X DDR)"},
		{SpeedQDR, 10, "40 Gb/sec (4X QDR)"},
		{SpeedFDR, 14, "56 Gb/sec (4X FDR)"},
		{SpeedEDR, 25, "100 Gb/sec (4X EDR)"},
		{SpeedHDR, 50, "200 Gb/sec (4X HDR)"},
		{SpeedNDR, 100, "400 Gb/sec (4X NDR)"},
		{SpeedXDR, 200, "800 Gb/sec (4X XDR)"},
		{SpeedXDR + 1, 0, ""},
	} {
		if got := c.s.LaneBits(); got != c.gbps*1e9 {
			t.Errorf("%s: %g bits/s a lane, want %g", c.s, got, c.gbps*1e9)
		}
		if c.gbps == 0 {
			continue
		}
		if got := fmtSysfsRate(4, c.s); got != c.x4 {
			t.Errorf("%s at 4X: %q, want sysfs's %q", c.s, got, c.x4)
		}
		if p, err := ParseSpeed(c.s.String()); err != nil || p != c.s {
			t.Errorf("ParseSpeed(%q) = %v, %v", c.s, p, err)
		}
	}
}

// fmtSysfsRate writes a width and speed the way sysfs's rate file does.
func fmtSysfsRate(width int, s Speed) string {
	return fmt.Sprintf("%g Gb/sec (%dX %s)", float64(width)*s.LaneBits()/1e9, width, s)
}
