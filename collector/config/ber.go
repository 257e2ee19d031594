package config

import (
	"math"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

// Default BER targets of health: (docs/metrics.md, "Bit error rate"):
// the two conditions under which NVIDIA UFM's public port-isolation
// plugin calls an NDR link bad, symbol errors above rate × 7,500 s ×
// 1e-15 over 125 minutes and above rate × 720 s × 1e-14 over 12 minutes.
const (
	DefaultBERTarget   = 1e-15 // over the long window, 125 minutes: warning
	DefaultBERCritical = 1e-14 // over the short window, 12 minutes: critical
)

// BERTargets are the bit error rates of one kind of link.
type BERTargets struct {
	Target, Critical float64
}

// checkBER reads the BER targets into h.BER (per kind of link) and o
// (the interval's judgement uses the warning target).
func (h *HealthConfig) checkBER(o *linkhealth.Options, bad func(field, format string, a ...any) error) error {
	for _, v := range []struct {
		field string
		v     float64
	}{{"ber_target", h.BERTarget}, {"ber_critical", h.BERCritical},
		{"host_links.ber_target", h.HostLinks.BERTarget}, {"host_links.ber_critical", h.HostLinks.BERCritical},
		{"switch_links.ber_target", h.SwitchLinks.BERTarget}, {"switch_links.ber_critical", h.SwitchLinks.BERCritical}} {
		if math.IsNaN(v.v) || v.v < 0 || v.v >= 1 {
			return bad(v.field, "%g is not a bit error rate between 0 and 1 (1e-12, say)", v.v)
		}
	}
	all := BERTargets{Target: pick(h.BERTarget, DefaultBERTarget), Critical: pick(h.BERCritical, DefaultBERCritical)}
	h.BER = map[string]BERTargets{}
	for kind, k := range map[string]LinkExpect{linkhealth.KindHost: h.HostLinks, linkhealth.KindSwitch: h.SwitchLinks} {
		h.BER[kind] = BERTargets{Target: pick(k.BERTarget, all.Target), Critical: pick(k.BERCritical, all.Critical)}
	}
	o.BERTarget = all.Target
	o.HostLinks.BER, o.SwitchLinks.BER = h.BER[linkhealth.KindHost].Target, h.BER[linkhealth.KindSwitch].Target
	return nil
}

func pick(v, def float64) float64 {
	if v > 0 {
		return v
	}
	return def
}

// berGiven says whether the section states a BER target.
func (h *HealthConfig) berGiven() bool {
	return h.BERTarget > 0 || h.BERCritical > 0 || h.HostLinks.BERTarget > 0 || h.HostLinks.BERCritical > 0 ||
		h.SwitchLinks.BERTarget > 0 || h.SwitchLinks.BERCritical > 0
}
