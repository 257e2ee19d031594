package trace

import (
	"errors"
	"testing"
)

// ParseDestination is the one reading of a written destination, and
// Validate the one check: every error names the key at fault ("" for the
// destination as a whole), and a good one keeps what was parsed.
func TestParseDestinationNamesTheKey(t *testing.T) {
	for _, tc := range []struct {
		lid             uint16
		gid, guid, node string
		port            int
		field           string
	}{
		{lid: 0xC000, field: "lid"},
		{gid: "fe80::zz", field: "gid"},
		{gid: "::", field: "gid"},
		{guid: "0x0", field: "guid"},
		{guid: "nope", field: "guid"},
		{node: string(make([]byte, 65)), field: "node"},
		{lid: 3, guid: "0x2", field: ""},
		{field: ""},
		{lid: 3, port: 1, field: "port"},
		{node: "n", port: 255, field: "port"},
	} {
		_, err := ParseDestination(tc.lid, tc.gid, tc.guid, tc.node, tc.port)
		var de *DestinationError
		if !errors.As(err, &de) || de.Field != tc.field {
			t.Errorf("%+v: %v; want an error on %q", tc, err, tc.field)
		}
	}
	d, err := ParseDestination(0, "", "0x0002c90300a1b2c3", "", 0)
	if err != nil || d.GUID != 0x0002c90300a1b2c3 || d.Kind() != "guid" {
		t.Fatalf("%+v %v", d, err)
	}
	d, err = ParseDestination(0, "", "", "host5", 2)
	if err != nil || d.Node != "host5" || d.Port != 2 {
		t.Fatalf("%+v %v", d, err)
	}
	if err := (Destination{GID: d.GID, LID: 4, GUID: 1}).Validate(); err == nil || err.Error() != "set exactly one of lid, gid, guid or node (found 2)" {
		t.Fatalf("two addresses: %v", err)
	}
}

// ParseOUI: hex with 0x, 24 bits, not 0.
func TestParseOUI(t *testing.T) {
	if o, err := ParseOUI("0x001405"); err != nil || o != 0x001405 {
		t.Fatalf("0x001405: %v %v", o, err)
	}
	for _, s := range []string{"001405", "5125", "0x", "0x0", "0x1000000", "0xgg", ""} {
		if _, err := ParseOUI(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}
