package trace

import (
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// TestNoAgentStatuses: the explicit "this node serves no such class"
// answers make a hop unsupported; anything else (a busy agent, status 7,
// a class-specific code) does not.
func TestNoAgentStatuses(t *testing.T) {
	for st, want := range map[ibmad.Status]bool{
		ibmad.StatusBadVersion:        true, // class or class version not supported
		ibmad.StatusMethodUnsupported: true,
		ibmad.StatusMethodAttrUnsupp:  true,
		ibmad.StatusOK:                false,
		ibmad.StatusBusy:              false,
		ibmad.StatusInvalidField:      false,
		0x0100:                        false,
	} {
		if got := noAgent(st); got != want {
			t.Errorf("noAgent(%s) = %v, want %v", st, got, want)
		}
	}
}
