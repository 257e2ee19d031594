package ibsimtest_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

// TestJoinProgramsMFT joins a group from three ibsim clients and checks
// with stock saquery that OpenSM knows the three members under the MLID
// our Join returned.
func TestJoinProgramsMFT(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join("..", "..", "..", "testdata", "topologies", "fattree-mini.net"),
		ibsimtest.Options{KeepSM: true, SMHost: true})
	members := []string{"H0-0", "H0-2", "H1-1"}
	mlid, err := fab.Join(ibsimtest.MGID(1), members...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := fab.Tool("H0-1", "saquery", "--smkey", "1", "-m")
	if err != nil {
		t.Fatalf("saquery -m: %v\n%s", err, out)
	}
	want := regexp.MustCompile(fmt.Sprintf(`(?i)MLID\.*0x%04x\b`, mlid))
	if n := len(want.FindAllStringIndex(out, -1)); n != len(members) {
		t.Errorf("saquery --smkey 1 -m lists %d member records of MLID %s, want %d:\n%s", n, fmt.Sprintf("0x%04x", mlid), len(members), out)
	}
	var r ibsimtest.MCMemberRecord
	if err := r.UnmarshalBinary(make([]byte, 51)); err == nil {
		t.Error("a 51-byte MCMemberRecord decoded")
	}
}
