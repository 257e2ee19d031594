package ibmad_test

import (
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// TestAddressString: an address names what the kernel is given, the GRH
// and its GID included: an error about a request sent by GID must not read
// "to lid 0 qp 1".
func TestAddressString(t *testing.T) {
	gid, err := ibmad.ParseGID("fe80::2:c903:a1:b2c3")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		addr ibmad.Address
		want string
	}{
		{ibmad.DRAddress(), "DR"},
		{ibmad.SMPAddress(7), "lid 7 qp 0"},
		{ibmad.GSIAddress(12, 0), "lid 12 qp 1"},
		{ibmad.GSIAddress(12, 3), "lid 12 qp 1 sl 3"},
		{ibmad.Address{QPN: 1, QKey: ibmad.QP1QKey, GRHPresent: true, GID: gid, HopLimit: 255},
			"gid fe80:0000:0000:0000:0002:c903:00a1:b2c3 qp 1 (GRH: sgid index 0, hop limit 255, tclass 0, flow label 0)"},
		{ibmad.Address{LID: 9, QPN: 1, SL: 2, GRHPresent: true, GID: gid, GIDIndex: 1, HopLimit: 64, TClass: 4, FlowLabel: 5},
			"lid 9 gid fe80:0000:0000:0000:0002:c903:00a1:b2c3 qp 1 sl 2 (GRH: sgid index 1, hop limit 64, tclass 4, flow label 5)"},
	} {
		if got := tc.addr.String(); got != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.addr, got, tc.want)
		}
	}
}
