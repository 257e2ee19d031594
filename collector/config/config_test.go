package config

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestLoadGood(t *testing.T) {
	c, err := Load("testdata/good.yml")
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(c.Interval) != 30*time.Second || time.Duration(c.Timeout) != 200*time.Millisecond || *c.Retries != 1 ||
		c.Concurrency != 8 || c.MADWindow != DefaultMADWindow || c.OUI != 0x001405 || !*c.Agent.Enabled || !*c.Agent.Ping {
		t.Fatalf("%+v", c)
	}
	if len(c.Destinations) != 4 || c.Destinations[0].LID != 17 || time.Duration(c.Destinations[0].Interval) != 30*time.Second ||
		time.Duration(c.Destinations[1].Interval) != 10*time.Second || c.Destinations[3].Node != "compute042 mlx5_0" {
		t.Fatalf("%+v", c.Destinations)
	}
	if c.Destinations[2].Line() != 13 {
		t.Fatalf("line %d", c.Destinations[2].Line())
	}
	if got := c.LabelNames(); len(got) != 2 || got[0] != "rack" || got[1] != "role" {
		t.Fatalf("labels %v", got)
	}
	if d := c.Destinations[1].Target(); d.GUID != 0x0002c90300a1b2c3 || d.Name != "by-guid" {
		t.Fatalf("%+v", d)
	}
	if d := c.Destinations[3].Target(); d.Node != "compute042 mlx5_0" || d.Port != 2 || d.Validate() != nil {
		t.Fatalf("%+v", d)
	}
	empty, err := Parse("empty.yml", nil)
	if err != nil || time.Duration(empty.Interval) != DefaultInterval || len(empty.Destinations) != 0 {
		t.Fatalf("empty file: %v %+v", err, empty)
	}
}

func TestLoadInvalid(t *testing.T) {
	for file, want := range map[string]string{
		"invalid-unknown-key.yml":       "testdata/invalid-unknown-key.yml:5: unknown key `colour` in a destination (valid keys: name, lid, gid, guid, node, port, interval, labels, paths, hops, mlid)",
		"invalid-two-addresses.yml":     "testdata/invalid-two-addresses.yml:4: destinations[1] (b): set exactly one of lid, gid, guid or node (found 2)",
		"invalid-duplicate-name.yml":    `testdata/invalid-duplicate-name.yml:4: destinations[1].name: "a" is already used at line 2`,
		"invalid-interval.yml":          "testdata/invalid-interval.yml:1: interval: 100ms is shorter than 1s",
		"invalid-duration.yml":          `testdata/invalid-duration.yml:1: "soon" is not a duration such as 30s or 1m`,
		"invalid-guid.yml":              `testdata/invalid-guid.yml:3: destinations[0] (g).guid: "not-a-guid" is not a port GUID such as 0x0002c90300a1b2c3`,
		"invalid-label.yml":             `testdata/invalid-label.yml:4: destinations[0] (l).labels: "hop" is set by the exporter; choose another name`,
		"invalid-label-dest.yml":        `testdata/invalid-label-dest.yml:4: destinations[0] (l).labels: "dest" is set by the exporter; choose another name`,
		"invalid-lid.yml":               "testdata/invalid-lid.yml:3: destinations[0] (m).lid: 49152 is not a unicast LID (1..49151)",
		"invalid-missing-name.yml":      "testdata/invalid-missing-name.yml:2: destinations[0].name: missing: every destination needs a name",
		"invalid-port-without-node.yml": "testdata/invalid-port-without-node.yml:4: destinations[0] (p).port: a port applies only to a node destination",
		"invalid-port.yml":              "testdata/invalid-port.yml:4: destinations[0] (q).port: 255 is not a port number (1..254)",
		"invalid-lid-fraction.yml":      "testdata/invalid-lid-fraction.yml:3: destinations[0] (m).lid: 12.9 is not an integer",
		"invalid-port-fraction.yml":     "testdata/invalid-port-fraction.yml:4: destinations[0] (q).port: 1.7 is not an integer",
		"invalid-lid-exponent.yml":      "testdata/invalid-lid-exponent.yml:3: destinations[0] (m).lid: 1e3 is not an integer",
		"invalid-lid-zero.yml":          "testdata/invalid-lid-zero.yml:3: destinations[0] (m).lid: 0 is not a unicast LID (1..49151)",
		"invalid-lid-negative.yml":      "testdata/invalid-lid-negative.yml:3: destinations[0] (m).lid: -5 is not a unicast LID (1..49151)",
		"invalid-lid-octal.yml":         "testdata/invalid-lid-octal.yml:3: destinations[0] (m).lid: 017: write integers in decimal or as 0x hex",
		"invalid-lid-65536.yml":         "testdata/invalid-lid-65536.yml:3: destinations[0] (m).lid: 65536 is not a unicast LID (1..49151)",
	} {
		t.Run(file, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata", file))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a config.Error", err)
			}
			if err.Error() != want {
				t.Fatalf("got  %s\nwant %s", err, want)
			}
		})
	}
}

func TestShippedExamplesLoad(t *testing.T) {
	for _, f := range []string{"../../config.example.yml", "../../examples/demo.yml"} {
		if _, err := Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
