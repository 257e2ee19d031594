package config

import (
	"errors"
	"testing"
	"time"
)

// TestResolveTTL: how long an SA resolution (GID, GUID, node name → LID)
// is reused is configurable, a minute by default; 0 asks the SA on every
// trace; a negative value is an error naming the line.
func TestResolveTTL(t *testing.T) {
	c, err := Parse("r.yml", []byte("interval: 30s\nresolve_ttl: 5s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(*c.ResolveTTL); got != 5*time.Second {
		t.Fatalf("resolve_ttl: %v, want 5s", got)
	}
	empty, err := Parse("empty.yml", nil)
	if err != nil || time.Duration(*empty.ResolveTTL) != time.Minute {
		t.Fatalf("default: %v %v", err, empty.ResolveTTL)
	}
	zero, err := Parse("zero.yml", []byte("resolve_ttl: 0s\n"))
	if err != nil || *zero.ResolveTTL != 0 {
		t.Fatalf("0s: %v %v", err, zero.ResolveTTL)
	}
	_, err = Parse("neg.yml", []byte("interval: 30s\nresolve_ttl: -1m\n"))
	var ce *Error
	want := "neg.yml:2: resolve_ttl: must not be negative"
	if !errors.As(err, &ce) || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
}
