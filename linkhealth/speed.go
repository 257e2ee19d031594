package linkhealth

import (
	"fmt"
	"strings"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Speed is a link's lane speed, legacy and extended (docs/protocol.md,
// "PortInfo"): LinkSpeedActive 1/2/4, LinkSpeedExtActive 1/2/4/8 and
// LinkSpeedExtActive2 1.
type Speed uint8

// Lane speeds, slowest first.
const (
	SpeedUnknown Speed = iota
	SpeedSDR
	SpeedDDR
	SpeedQDR
	SpeedFDR
	SpeedEDR
	SpeedHDR
	SpeedNDR
	SpeedXDR
)

var speedNames = [...]string{"unknown", "SDR", "DDR", "QDR", "FDR", "EDR", "HDR", "NDR", "XDR"}

// laneBits is the nominal rate of one lane, the one convention for every
// speed (docs/metrics.md, "Bit error rate"): the rate the kernel's sysfs
// rate file and ibstat show (4X QDR = 40 Gb/s, 4X EDR = 100 Gb/s). At
// SDR to QDR it is the signalling rate (8b/10b: 80% of it is data); from
// FDR on, with 64b/66b, about the data rate.
var laneBits = [...]float64{0, 2.5e9, 5e9, 10e9, 14e9, 25e9, 50e9, 100e9, 200e9}

func (s Speed) String() string {
	if int(s) < len(speedNames) {
		return speedNames[s]
	}
	return fmt.Sprintf("Speed(%d)", uint8(s))
}

// LaneBits is the nominal rate of one lane in bits per second (laneBits).
func (s Speed) LaneBits() float64 {
	if int(s) < len(laneBits) {
		return laneBits[s]
	}
	return 0
}

// MarshalText writes the speed's name.
func (s Speed) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ParseSpeed parses SDR..XDR (any case) or a lane rate in Gb/s ("25").
func ParseSpeed(v string) (Speed, error) {
	for i, n := range speedNames[1:] {
		if strings.EqualFold(v, n) {
			return Speed(i + 1), nil
		}
	}
	for i, b := range laneBits[1:] {
		if v == fmt.Sprintf("%g", b/1e9) {
			return Speed(i + 1), nil
		}
	}
	return 0, fmt.Errorf("speed %q is not one of SDR, DDR, QDR, FDR, EDR, HDR, NDR, XDR (or a lane rate in Gb/s: 2.5, 5, 10, 14, 25, 50, 100, 200)", v)
}

// legacySpeed maps LinkSpeedActive/Supported bits to speeds.
func legacySpeed(bit uint8) Speed {
	switch bit {
	case 1:
		return SpeedSDR
	case 2:
		return SpeedDDR
	case 4:
		return SpeedQDR
	}
	return SpeedUnknown
}

// extSpeed maps LinkSpeedExtActive/Supported bits to speeds.
func extSpeed(bit uint8) Speed {
	switch bit {
	case 1:
		return SpeedFDR
	case 2:
		return SpeedEDR
	case 4:
		return SpeedHDR
	case 8:
		return SpeedNDR
	}
	return SpeedUnknown
}

// highBit is the highest set bit of v (0 for 0).
func highBit(v uint8) uint8 {
	if v == 0 {
		return 0
	}
	b := uint8(1)
	for v >>= 1; v != 0; v >>= 1 {
		b <<= 1
	}
	return b
}

// Width bits of LinkWidthActive/Enabled/Supported and their lanes.
func widthLanes(bit uint8) int {
	switch bit {
	case 1:
		return 1
	case 2:
		return 4
	case 4:
		return 8
	case 8:
		return 12
	case 16:
		return 2
	}
	return 0
}

// widestBit is the widest width of a width mask (12X, 8X, 4X, 2X, 1X in
// that order: 2X is bit 4 but narrower than 4X).
func widestBit(m uint8) uint8 {
	for _, b := range [...]uint8{8, 4, 2, 16, 1} {
		if m&b != 0 {
			return b
		}
	}
	return 0
}

// widthMask lists the lanes of a width mask ("1X,4X").
func widthMask(m uint8) string {
	var s []string
	for _, b := range [...]uint8{1, 16, 2, 4, 8} {
		if m&b != 0 {
			s = append(s, fmt.Sprintf("%dX", widthLanes(b)))
		}
	}
	return strings.Join(s, ",")
}

// ParseWidth parses "4x", "4X" or "4".
func ParseWidth(v string) (int, error) {
	s := strings.TrimSuffix(strings.ToLower(v), "x")
	switch s {
	case "1", "2", "4", "8", "12":
		var n int
		fmt.Sscan(s, &n)
		return n, nil
	}
	return 0, fmt.Errorf("width %q is not one of 1x, 2x, 4x, 8x, 12x", v)
}

// mtuBytes maps NeighborMTU (1..5) to bytes.
func mtuBytes(m uint8) int {
	if m >= 1 && m <= 5 {
		return 128 << m
	}
	return 0
}

// portSpeeds decodes a port's active speed and its speed masks. ext says
// whether the node advertises IsExtendedSpeedsSupported (a switch in its
// port 0's CapabilityMask, as iblinkinfo reads it).
type portSpeeds struct {
	active         Speed
	ext            bool  // extended speed fields valid
	legacySup      uint8 // LinkSpeedSupported
	extSup         uint8 // LinkSpeedExtSupported (0 unless ext)
	xdrSup         bool
	legacyEna      uint8
	extEna, xdrEna uint8
}

func decodeSpeeds(pi *ibmad.PortInfo, capMask uint32) portSpeeds {
	s := portSpeeds{ext: capMask&ibmad.CapIsExtendedSpeedsSupported != 0, legacySup: pi.LinkSpeedSupported,
		legacyEna: pi.LinkSpeedEnabled}
	if s.ext {
		s.extSup, s.extEna = pi.LinkSpeedExtSupported, pi.LinkSpeedExtEnabled
		s.xdrSup, s.xdrEna = pi.LinkSpeedExtSupported2&1 != 0, pi.LinkSpeedExtEnabled2
	}
	switch {
	case s.ext && pi.LinkSpeedExtActive2&1 != 0:
		s.active = SpeedXDR
	case s.ext && pi.LinkSpeedExtActive != 0:
		s.active = extSpeed(pi.LinkSpeedExtActive)
	default:
		s.active = legacySpeed(pi.LinkSpeedActive)
	}
	return s
}

// supportedList names the speeds of a port's masks ("SDR,DDR,QDR,EDR").
func speedList(legacy, ext uint8, xdr bool) string {
	var s []string
	for _, b := range [...]uint8{1, 2, 4} {
		if legacy&b != 0 {
			s = append(s, legacySpeed(b).String())
		}
	}
	for _, b := range [...]uint8{1, 2, 4, 8} {
		if ext&b != 0 {
			s = append(s, extSpeed(b).String())
		}
	}
	if xdr {
		s = append(s, SpeedXDR.String())
	}
	return strings.Join(s, ",")
}

// couldBeSpeed is the fastest speed both ends support, the way iblinkinfo
// computes its "Could be" (docs/metrics.md, "Link health"): the extended
// masks when both ends have extended speeds, else the legacy masks; XDR
// when both support it.
func couldBeSpeed(a, b portSpeeds) Speed {
	if a.xdrSup && b.xdrSup {
		return SpeedXDR
	}
	if a.ext && b.ext && a.extSup != 0 && b.extSup != 0 {
		if s := extSpeed(highBit(a.extSup & b.extSup)); s != SpeedUnknown {
			return s
		}
	}
	return legacySpeed(highBit(a.legacySup & b.legacySup & 7))
}

// UnmarshalText parses a speed's name.
func (s *Speed) UnmarshalText(b []byte) error {
	if string(b) == "unknown" {
		*s = SpeedUnknown
		return nil
	}
	v, err := ParseSpeed(string(b))
	*s = v
	return err
}
