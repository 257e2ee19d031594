package config

import (
	"testing"
	"time"
)

// TestHealthOptions: readings are shared for the interval, and a port's
// previous reading is a baseline for at most 3 of the longest interval,
// a destination's or a selector's included.
func TestHealthOptions(t *testing.T) {
	for yml, want := range map[string]time.Duration{
		"interval: 60s\ndestinations: [{name: a, lid: 1}]\n":                                            3 * time.Minute,
		"interval: 60s\ndestinations: [{name: a, lid: 1, interval: 5m}]\n":                              15 * time.Minute,
		"interval: 30s\ndestinations: []\ndiscover: [{all: true, sample: 8, interval: 2m}]\n":           6 * time.Minute,
		"interval: 2m\ndestinations: []\ndiscover: [{all: true, sample: 8}]\nhealth: {enabled: true}\n": 6 * time.Minute,
	} {
		c, err := Parse("c.yml", []byte(yml))
		if err != nil {
			t.Fatal(err)
		}
		o := c.HealthOptions()
		if o.Share != time.Duration(c.Interval) || o.MaxWindow != want {
			t.Errorf("%q: share %v, max window %v; want %v, %v", yml, o.Share, o.MaxWindow, time.Duration(c.Interval), want)
		}
	}
}
