package config

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestHealthCongestionKeys(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.yml")
	c, err := Parse(file, []byte(`
health:
  enabled: true
  xmit_wait_limit: 0.05
  xmit_wait_tick_symbols: 32
destinations: [{name: a, lid: 1}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if o := c.Health.Options; o.XmitWaitLimit != 0.05 || o.XmitWaitTickSymbols != 32 {
		t.Fatalf("%+v", o)
	}
	c, err = Parse(file, []byte("health: {enabled: true}\ndestinations: [{name: a, lid: 1}]\n"))
	if err != nil || c.Health.Options.XmitWaitLimit != 0 || c.Health.Options.XmitWaitTickSymbols != 0 {
		t.Fatalf("default: %v %+v", err, c.Health.Options)
	}
	for yml, want := range map[string]string{
		"health:\n  enabled: true\n  xmit_wait_limit: 5":                      `c.yml:4: health.xmit_wait_limit: "5" is not a share above 0 and at most 1 (0.05 is 5% of the interval)`,
		"health:\n  enabled: true\n  xmit_wait_limit: 0":                      `c.yml:4: health.xmit_wait_limit: "0" is not a share`,
		"health:\n  enabled: true\n  xmit_wait_limit: -0.1":                   `c.yml:4: health.xmit_wait_limit: "-0.1" is not a share`,
		"health:\n  enabled: true\n  xmit_wait_limit: 5%":                     `c.yml:4: health.xmit_wait_limit: "5%" is not a share`,
		"health:\n  enabled: true\n  xmit_wait_limit: .nan":                   `c.yml:4: health.xmit_wait_limit: ".nan" is not a share`,
		"health:\n  enabled: true\n  xmit_wait_limit: [1]":                    `c.yml:4: health.xmit_wait_limit:`,
		"health:\n  xmit_wait_limit: 0.1":                                     "c.yml:2: health.enabled: health settings are given but health is off",
		"health:\n  enabled: true\n  counters: false\n  xmit_wait_limit: 0.1": "health.xmit_wait_limit: the congestion limit needs counters: true",
		"health:\n  enabled: true\n  xmit_wait_tick_symbols: 0":               "c.yml:4: health.xmit_wait_tick_symbols: 0: want a PortXmitWait tick in symbol times, 1..256 (PortSamplesControl Tick + 1)",
		"health:\n  enabled: true\n  xmit_wait_tick_symbols: 257":             "c.yml:4: health.xmit_wait_tick_symbols: 257: want",
		"health:\n  enabled: true\n  xmit_wait_tick_symbols: 8.5":             "c.yml:4: health.xmit_wait_tick_symbols: 8.5",
	} {
		_, err := Parse(file, []byte("\n"+yml+"\ndestinations: [{name: a, lid: 1}]\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %q", yml, err, want)
		}
	}
}
