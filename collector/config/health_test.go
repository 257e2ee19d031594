package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

func TestHealthSection(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "thresholds"), []byte("# ibqueryerrors\nSymbolErrorCounter=10\nLinkDownedCounter=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "c.yml")
	c, err := Parse(file, []byte(`
health:
  enabled: true
  expect_width: 4x
  expect_speed: EDR
  threshold_file: thresholds
  limits: {SymbolErrorCounter: 3}
destinations: [{name: a, lid: 1}]
`))
	if err != nil {
		t.Fatal(err)
	}
	o := c.Health.Options
	if o.ExpectWidth != 4 || o.ExpectSpeed != linkhealth.SpeedEDR || !o.Counters || o.Limits["SymbolErrorCounter"] != 3 || o.Limits["LinkDownedCounter"] != 1 {
		t.Fatalf("%+v", o)
	}
	c, err = Parse(file, []byte("destinations: [{name: a, lid: 1}]\n"))
	if err != nil || c.Health.Enabled {
		t.Fatalf("default: %v %+v", err, c.Health)
	}
	for yml, want := range map[string]string{
		"health: {enabled: true, expect_width: 3x}":                          "c.yml:2: health.expect_width: width \"3x\"",
		"health: {enabled: true, expect_speed: fast}":                        "health.expect_speed",
		"health: {enabled: true, limits: {SymbolErrors: 1}}":                 "health.limits: \"SymbolErrors\" is not a counter",
		"health: {enabled: true, threshold_file: nope}":                      "health.threshold_file",
		"health: {expect_width: 4x}":                                         "health.enabled: health settings are given but health is off",
		"health: {enabled: true, counters: false, limits: {VL15Dropped: 1}}": "counter limits need counters: true",
		"health: {enabled: true, speed: EDR}":                                "unknown key `speed`",
	} {
		_, err := Parse(file, []byte("\n"+yml+"\ndestinations: [{name: a, lid: 1}]\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", yml, err, want)
		}
	}
}
