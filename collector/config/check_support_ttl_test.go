package config

import (
	"errors"
	"testing"
	"time"
)

// TestAgentSupportTTL: how long a node's "agent or no agent" answer is
// trusted is configurable, 10 minutes by default, and must be positive.
func TestAgentSupportTTL(t *testing.T) {
	c, err := Load("testdata/agent-support-ttl.yml")
	if err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(*c.AgentSupportTTL); got != 5*time.Minute {
		t.Fatalf("agent_support_ttl: %v, want 5m", got)
	}
	empty, err := Parse("empty.yml", nil)
	if err != nil || time.Duration(*empty.AgentSupportTTL) != DefaultAgentSupportTTL || DefaultAgentSupportTTL != 10*time.Minute {
		t.Fatalf("default: %v %v", err, empty.AgentSupportTTL)
	}
	_, err = Load("testdata/invalid-agent-support-ttl.yml")
	var ce *Error
	want := "testdata/invalid-agent-support-ttl.yml:2: agent_support_ttl: 0s: want a positive duration such as 10m"
	if !errors.As(err, &ce) || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	neg, err := Parse("neg.yml", []byte("agent_support_ttl: -1m\n"))
	if err == nil || !errors.As(err, &ce) {
		t.Fatalf("negative: %v %+v", err, neg)
	}
}
