package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEvidenceSection(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.yml")
	c, err := Parse(file, []byte("evidence: {enabled: true, latency_threshold: 2ms, max_links: 50}\ndestinations: [{name: a, lid: 1}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Evidence.Enabled || time.Duration(c.Evidence.LatencyThreshold) != 2*time.Millisecond || c.Evidence.MaxLinks != 50 {
		t.Fatalf("%+v", c.Evidence)
	}
	c, err = Parse(file, []byte("evidence: {enabled: true}\ndestinations: [{name: a, lid: 1}]\n"))
	if err != nil || c.Evidence.MaxLinks != DefaultEvidenceMaxLinks || c.Evidence.LatencyThreshold != 0 {
		t.Fatalf("defaults: %v %+v", err, c.Evidence)
	}
	c, err = Parse(file, []byte("destinations: [{name: a, lid: 1}]\n"))
	if err != nil || c.Evidence.Enabled || c.Evidence.LatencyThreshold != 0 {
		t.Fatalf("default: %v %+v", err, c.Evidence)
	}
	for yml, want := range map[string]string{
		"evidence: {enabled: true, latency_threshold: -1ms}": "c.yml:2: evidence.latency_threshold: -1ms is negative",
		"evidence: {latency_threshold: 1ms}":                 "c.yml:2: evidence.enabled: evidence settings are given but evidence is off",
		"evidence: {max_links: 10}":                          "c.yml:2: evidence.enabled: evidence settings are given but evidence is off",
		"evidence: {enabled: true, max_links: -1}":           "c.yml:2: evidence.max_links: -1: want 1..1000000",
		"evidence: {enabled: true, max_links: 0}":            "c.yml:2: evidence.max_links: 0: want 1..1000000",
		"evidence: {enabled: true, latency_threshold: soon}": `"soon" is not a duration`,
		"evidence: {enabled: true, threshold: 1ms}":          "unknown key `threshold`",
	} {
		_, err := Parse(file, []byte("\n"+yml+"\ndestinations: [{name: a, lid: 1}]\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", yml, err, want)
		}
	}
}
