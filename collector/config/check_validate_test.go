package config

import (
	"errors"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestValidateKey: validate: says who validates each hop, as ibtracer's
// --validate does (auto, the default; agent; sma; off), and the key's old
// booleans keep their meaning: false is off, true (the old default) is
// the default, auto. The mode reaches trace.Options.Validate.
func TestValidateKey(t *testing.T) {
	for yml, want := range map[string]trace.ValidateMode{
		"":                  trace.ValidateAuto,
		"validate: auto\n":  trace.ValidateAuto,
		"validate: agent\n": trace.ValidateAgent,
		"validate: sma\n":   trace.ValidateSMA,
		"validate: off\n":   trace.ValidateOff,
		"validate: false\n": trace.ValidateOff,
		"validate: true\n":  trace.ValidateAuto,
	} {
		c, err := Parse("v.yml", []byte(yml))
		if err != nil {
			t.Fatalf("%q: %v", yml, err)
		}
		o := c.TraceOptions()
		if o.Validate != want {
			t.Errorf("%q: Validate %q, want %q", yml, o.Validate, want)
		}
	}
}

// TestValidateKeyRefused: an unknown mode is refused with the file, the
// line and the key.
func TestValidateKeyRefused(t *testing.T) {
	_, err := Parse("v.yml", []byte("interval: 30s\nvalidate: agents\n"))
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a config.Error", err)
	}
	if want := `v.yml:2: validate: "agents": want auto, agent, sma or off (true is auto, false is off)`; err.Error() != want {
		t.Fatalf("got  %s\nwant %s", err, want)
	}
}
