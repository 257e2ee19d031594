package build

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// cgoPackages lists the packages (tests included) that go list says
// compile C, with the given build tags.
func cgoPackages(t *testing.T, tags string) []string {
	t.Helper()
	args := []string{"list", "-test", "-f", "{{if .CgoFiles}}{{.ImportPath}}{{end}}"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, "./...")...)
	cmd.Dir = "../.."
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	pkgs := strings.Fields(string(out))
	sort.Strings(pkgs)
	return pkgs
}

// `go build ./...`, `go vet ./...` and `go test ./...` need no C header on
// a machine with a C compiler: without the ibcref tag no package compiles
// C. With it (make test), the cross-checks against libibmad, libibumad and
// OpenSM's headers do (docs/architecture.md, "Testing against independent
// sources").
func TestNoCgoWithoutTag(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	if pkgs := cgoPackages(t, ""); len(pkgs) != 0 {
		t.Errorf("without -tags ibcref these packages compile C (they need the C headers): %v", pkgs)
	}
	want := []string{"ibmad/internal/cmadref", "ibmad/internal/cumadref", "ibmad/internal/osmref"}
	got := strings.Join(cgoPackages(t, "ibcref"), " ")
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("with -tags ibcref, %s compiles no C: the cross-checks would not run (got %s)", w, got)
		}
	}
}
