package config

import (
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

// TestHealthBERTargets: the defaults are UFM's (1e-15 long, 1e-14
// short); a kind's key overrides the general one; a rate outside (0, 1)
// or a target with health off is refused.
func TestHealthBERTargets(t *testing.T) {
	c, err := Parse("c.yml", []byte("health: {enabled: true}\ndestinations: [{name: a, lid: 1}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{linkhealth.KindHost, linkhealth.KindSwitch} {
		if got := c.Health.BER[k]; got != (BERTargets{1e-15, 1e-14}) {
			t.Fatalf("defaults, %s: %+v", k, got)
		}
	}
	c, err = Parse("c.yml", []byte(`
health:
  enabled: true
  ber_target: 1e-12
  switch_links: {ber_target: 1e-14, ber_critical: 1e-13}
destinations: [{name: a, lid: 1}]
`))
	if err != nil {
		t.Fatal(err)
	}
	h, s := c.Health.BER[linkhealth.KindHost], c.Health.BER[linkhealth.KindSwitch]
	if h != (BERTargets{1e-12, 1e-14}) || s != (BERTargets{1e-14, 1e-13}) || c.Health.Options.BERTarget != 1e-12 ||
		c.Health.Options.SwitchLinks.BER != 1e-14 || c.Health.Options.HostLinks.BER != 1e-12 {
		t.Fatalf("host %+v switch %+v options %+v", h, s, c.Health.Options)
	}
	for yml, want := range map[string]string{
		"health: {enabled: true, ber_target: 2}":                     "health.ber_target: 2 is not a bit error rate",
		"health: {enabled: true, host_links: {ber_critical: -1e-9}}": "health.host_links.ber_critical",
		"health: {ber_target: 1e-12}":                                "health is off",
	} {
		_, err := Parse("c.yml", []byte(yml+"\ndestinations: [{name: a, lid: 1}]\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", yml, err, want)
		}
	}
}
