package config

import "testing"

// TestMulticastDestinationKey: mlid: with lid: is a multicast destination;
// a bad one is refused with file, line and field.
func TestMulticastDestinationKey(t *testing.T) {
	c, err := Parse("test.yml", []byte("destinations:\n  - name: m\n    mlid: 0xc001\n    lid: 12\n  - {name: u, lid: 12}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Destinations[0]; !d.Multicast() || d.MLID != 0xc001 || d.Target().LID != 12 {
		t.Fatalf("%+v", d)
	}
	if a, args := c.Destinations[0].MulticastAddress(); a != "mlid 0xc001 lid 12" || args != "-m 0xc001 12" {
		t.Fatalf("%q %q", a, args)
	}
	if c.Destinations[1].Multicast() {
		t.Fatal("a lid: destination is multicast")
	}
	for _, tc := range []struct{ yml, want string }{
		{"destinations:\n  - name: m\n    mlid: 0xbfff\n    lid: 12\n",
			"test.yml:3: destinations[0] (m).mlid: 0xbfff is not a multicast LID (0xc000..0xfffe)"},
		{"destinations:\n  - name: m\n    mlid: 0xffff\n    lid: 12\n",
			"test.yml:3: destinations[0] (m).mlid: 0xffff is not a multicast LID (0xc000..0xfffe)"},
		{"destinations:\n  - name: m\n    lid: 12\n    mlid: 0\n",
			"test.yml:4: destinations[0] (m).mlid: 0 is not a multicast LID (0xc000..0xfffe)"},
		{"destinations:\n  - name: m\n    mlid: 0xc001\n    guid: 0x0002c90300a1b2c3\n",
			"test.yml:3: destinations[0] (m).mlid: 0xc001: a multicast destination names its member by lid: (the path from this node to that LID over the group's MFTs); gid, guid and node are not resolved for it"},
		{"destinations:\n  - name: m\n    mlid: 0xc001\n",
			"test.yml:3: destinations[0] (m).mlid: 0xc001: a multicast destination names its member by lid: (the path from this node to that LID over the group's MFTs); gid, guid and node are not resolved for it"},
		{"destinations:\n  - name: m\n    mlid: 0xc001\n    lid: 12\n    paths: all\n",
			"test.yml:5: destinations[0] (m).paths: all: a multicast destination (mlid:) has one path"},
	} {
		_, err := Parse("test.yml", []byte(tc.yml))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got  %v\n want %s", tc.yml, err, tc.want)
		}
	}
}
