package config

import (
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Integer keys take integers only, in decimal or 0x hex, within their
// range: a fraction is not truncated, an explicit 0 is not taken as "the
// default", and the error names the file, line and key.
func TestStrictIntegers(t *testing.T) {
	for yml, want := range map[string]string{
		"retries: 1.5\n":                  "c.yml:1: retries: 1.5 is not an integer",
		"retries: -1\n":                   "c.yml:1: retries: -1: want 0..10",
		"retries: 99999999999999999999\n": "c.yml:1: retries: 99999999999999999999: want 0..10",
		"concurrency: 0\n":                "c.yml:1: concurrency: 0: want 1..4096",
		"concurrency: 2e3\n":              "c.yml:1: concurrency: 2e3 is not an integer",
		"mad_window: 0\n":                 "c.yml:1: mad_window: 0: want 1..65536",
		"mad_window: 100000\n":            "c.yml:1: mad_window: 100000: want 1..65536",
		"mad_window_per_target: 0.5\n":    "c.yml:1: mad_window_per_target: 0.5 is not an integer",
		"sl: 16\n":                        "c.yml:1: sl: 16: want 0..15",
		"sl: 1.5\n":                       "c.yml:1: sl: 1.5 is not an integer",
		"sl: 0b11\n":                      "c.yml:1: sl: 0b11: write integers in decimal or as 0x hex",
		"sl: 0o7\n":                       "c.yml:1: sl: 0o7: write integers in decimal or as 0x hex",
		"sl: 1_0\n":                       "c.yml:1: sl: 1_0: write integers in decimal or as 0x hex",
		"sl: +3\n":                        "c.yml:1: sl: +3: write integers in decimal or as 0x hex",
		"discover:\n  - {all: true, sample: 2.5}\n":                           "c.yml:2: discover[0].sample: 2.5 is not an integer",
		"health:\n  enabled: true\n  limits:\n    SymbolErrorCounter: 1.5\n":  "c.yml:4: health.limits.SymbolErrorCounter: 1.5 is not an integer",
		"health:\n  enabled: true\n  limits:\n    SymbolErrorCounter: -1\n":   "c.yml:4: health.limits.SymbolErrorCounter: -1: want 0..18446744073709551615",
		"destinations:\n  - {name: a, lid: .inf}\n":                           "c.yml:2: destinations[0] (a).lid: .inf is not an integer",
		"destinations:\n  - {name: n, node: x, port: 0}\n":                    "c.yml:2: destinations[0] (n).port: 0 is not a port number (1..254)",
		"destinations:\n  - {name: n, node: x, port: 0x100}\n":                "c.yml:2: destinations[0] (n).port: 0x100 is not a port number (1..254)",
		"destinations:\n  - lid: 3.5\n":                                       "c.yml:2: destinations[0].lid: 3.5 is not an integer",
		"destinations:\n  - {name: a, lid: 1}\n  - {name: b, lid: 49151.0}\n": "c.yml:3: destinations[1] (b).lid: 49151.0 is not an integer",
	} {
		_, err := Parse("c.yml", []byte(yml))
		if err == nil || err.Error() != want {
			t.Errorf("%q:\ngot  %v\nwant %s", yml, err, want)
		}
	}
}

// Hex is accepted (LIDs are often written so, by ibroute and dump_lfts),
// and so are the ends of every range.
func TestIntegersInHexAndAtTheirBounds(t *testing.T) {
	c, err := Parse("c.yml", []byte("retries: 0\nsl: 0xf\nconcurrency: 4096\nmad_window: 65536\nmad_window_per_target: 1\n"+
		"health:\n  enabled: true\n  limits:\n    SymbolErrorCounter: 18446744073709551615\n"+
		"discover:\n  - {all: true, sample: 0}\n"+
		"destinations:\n  - {name: a, lid: 0x11}\n  - {name: b, lid: 49151}\n  - {name: c, node: x, port: 254}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if *c.Retries != 0 || c.SL != 15 || c.Concurrency != 4096 || c.MADWindow != 65536 || c.MADPerTarget != 1 ||
		c.Health.Options.Limits["SymbolErrorCounter"] != 18446744073709551615 || c.Discover[0].Sample != 0 ||
		c.Destinations[0].LID != 17 || c.Destinations[1].LID != 49151 || c.Destinations[2].Port != 254 {
		t.Fatalf("%+v", c)
	}
}

// Every integer key of the file has a range in intKeys (and every range
// is of a key of the file): a new integer key cannot be truncated by yaml
// unnoticed.
func TestEveryIntegerKeyHasARange(t *testing.T) {
	unmarshaler := reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
	found := map[string]bool{}
	var walk func(typ reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		if reflect.PointerTo(typ).Implements(unmarshaler) {
			return // Duration, OUI: read by their own UnmarshalYAML
		}
		switch typ.Kind() {
		case reflect.Pointer:
			walk(typ.Elem(), path)
		case reflect.Slice:
			walk(typ.Elem(), path+"[]")
		case reflect.Map:
			walk(typ.Elem(), join(path, "*"))
		case reflect.Struct:
			for i := 0; i < typ.NumField(); i++ {
				tag := strings.Split(typ.Field(i).Tag.Get("yaml"), ",")[0]
				if tag != "" && tag != "-" {
					walk(typ.Field(i).Type, join(path, tag))
				}
			}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			found[path] = true
		}
	}
	walk(reflect.TypeOf(Config{}), "")
	for k := range found {
		if _, ok := intKeys[k]; !ok {
			t.Errorf("integer key %s has no range in intKeys", k)
		}
	}
	for k := range intKeys {
		if !found[k] {
			t.Errorf("intKeys has %s, which is not an integer key of Config", k)
		}
	}
	if len(found) < len(intKeys) || len(found) == 0 {
		t.Fatalf("found %d integer keys", len(found))
	}
}
