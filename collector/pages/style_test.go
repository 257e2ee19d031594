package pages

import "testing"

// A hop verdict the pages have no colour for yet is drawn, as v-other.
func TestVerdictClassOther(t *testing.T) {
	if verdictClass("validated_elsewhere") != "v-other" || verdictClass("mismatch") != "v-mismatch" {
		t.Error("verdictClass")
	}
}
