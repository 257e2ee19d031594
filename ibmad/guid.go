package ibmad

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// GUID is a 64-bit EUI-64 node, port or system image GUID.
type GUID uint64

func (g GUID) String() string {
	const hex = "0123456789abcdef"
	var b [18]byte // "0x" and 16 digits, as fmt's "0x%016x"
	b[0], b[1] = '0', 'x'
	for i := 17; i >= 2; i-- {
		b[i] = hex[g&0xf]
		g >>= 4
	}
	return string(b[:])
}

// ParseGUID parses "0x0002c90300a1b2c3", "0002c90300a1b2c3" or the sysfs
// form "0002:c903:00a1:b2c3".
func ParseGUID(s string) (GUID, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimPrefix(strings.TrimPrefix(t, "0x"), "0X")
	t = strings.ReplaceAll(t, ":", "")
	if t == "" || len(t) > 16 {
		return 0, fmt.Errorf("GUID %q: want up to 16 hex digits: %w", s, ErrInvalid)
	}
	v, err := strconv.ParseUint(t, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("GUID %q: %w", s, ErrInvalid)
	}
	return GUID(v), nil
}

// GID is a 128-bit global identifier: a 64-bit subnet prefix and a port GUID.
type GID [16]byte

// DefaultGIDPrefix is the link-local subnet prefix fe80::/64.
const DefaultGIDPrefix uint64 = 0xfe80_0000_0000_0000

// MakeGID builds a GID from a subnet prefix and a port GUID.
func MakeGID(prefix uint64, guid GUID) GID {
	var g GID
	binary.BigEndian.PutUint64(g[0:], prefix)
	binary.BigEndian.PutUint64(g[8:], uint64(guid))
	return g
}

// Prefix returns the subnet prefix.
func (g GID) Prefix() uint64 { return binary.BigEndian.Uint64(g[0:]) }

// GUID returns the interface ID (the port GUID).
func (g GID) GUID() GUID { return GUID(binary.BigEndian.Uint64(g[8:])) }

// IsZero reports whether every byte is zero.
func (g GID) IsZero() bool { return g == GID{} }

// String formats g as sysfs does: 8 groups of 4 lowercase hex digits.
func (g GID) String() string {
	var sb strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			sb.WriteByte(':')
		}
		fmt.Fprintf(&sb, "%02x%02x", g[i], g[i+1])
	}
	return sb.String()
}

// ParseGID parses a GID in any IPv6 notation ("fe80::2:c903:a1:b2c3" or
// the uncompressed sysfs form).
func ParseGID(s string) (GID, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil || !a.Is6() || a.Zone() != "" {
		return GID{}, fmt.Errorf("GID %q: want an IPv6-style address such as fe80::2:c903:a1:b2c3: %w", s, ErrInvalid)
	}
	return GID(a.As16()), nil
}
