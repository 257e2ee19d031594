package config

import "testing"

// The oui key has the one rule of trace.ParseOUI, the --oui flag's: hex
// with 0x. Digits without it are refused, not read as decimal or as C's
// octal (001405 was 773, silently).
func TestOUIIsHexWith0x(t *testing.T) {
	for yml, want := range map[string]uint32{"oui: 0x001405\n": 0x001405, "oui: 0X00144F\n": 0x00144f} {
		c, err := Parse("o.yml", []byte(yml))
		if err != nil || uint32(c.OUI) != want {
			t.Errorf("%q: %v %#x; want %#x", yml, err, c.OUI, want)
		}
	}
	for yml, want := range map[string]string{
		"oui: 001405\n":    `o.yml:1: oui "001405" is not a 24-bit hex number such as 0x001405`,
		"oui: 5125\n":      `o.yml:1: oui "5125" is not a 24-bit hex number such as 0x001405`,
		"oui: 0x1000000\n": `o.yml:1: oui "0x1000000" is not a 24-bit hex number such as 0x001405`,
	} {
		if _, err := Parse("o.yml", []byte(yml)); err == nil || err.Error() != want {
			t.Errorf("%q: got %v\nwant %s", yml, err, want)
		}
	}
}

// A destination's GID is read once, at load: one that is no address (all
// zeros) is refused there, with its key, not left to fail every trace.
func TestZeroGIDRefusedAtLoad(t *testing.T) {
	_, err := Parse("g.yml", []byte("destinations:\n  - name: z\n    gid: \"::\"\n"))
	want := `g.yml:3: destinations[0] (z).gid: "::" is not a GID such as fe80::2:c903:a1:b2c3`
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
}
