package trace

import "testing"

// TestWorstOrder: of a path set, Worst is a mismatch if there is one,
// otherwise the path that fell furthest short (ibtracer's exit status
// order: too long 3, unreachable 4, resolve 5, device 6); of equals, the
// first; a status the package does not know ranks as a device error.
func TestWorstOrder(t *testing.T) {
	order := []Status{StatusOK, StatusTooLong, StatusUnreachable, StatusResolve, StatusDevice, StatusMismatch}
	for i, a := range order {
		for j, b := range order {
			ps := &PathSet{Paths: []*Result{{Status: a}, {Status: b}}}
			want := ps.Paths[0]
			if j > i {
				want = ps.Paths[1]
			}
			if got := ps.Worst(); got != want {
				t.Errorf("Worst of %s, %s: %s (path %p), want %s (path %p)", a, b, got.Status, got, want.Status, want)
			}
		}
	}
	odd := &PathSet{Paths: []*Result{{Status: "brand_new"}, {Status: StatusDevice}, {Status: StatusResolve}}}
	if odd.Worst() != odd.Paths[0] {
		t.Errorf("an unknown status does not rank as a device error: Worst is %s", odd.Worst().Status)
	}
}
