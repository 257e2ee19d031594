package build

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every package has a doc.go that says what each of its files holds
// (issue 22: the entry docs must match the files): it names every
// non-test .go file of its directory, and no file that is not there.
func TestEveryPackageDocNamesItsFiles(t *testing.T) {
	cmd := exec.Command("go", "list", "-tags", "ibcref", "-f", "{{.Dir}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	goFile := regexp.MustCompile(`\b[a-z][a-z0-9_]*\.go\b`)
	for _, dir := range strings.Fields(string(out)) {
		abs, _ := filepath.Abs("../..")
		rel, _ := filepath.Rel(abs, dir)
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		var src []string
		for _, f := range files {
			if b := filepath.Base(f); !strings.HasSuffix(b, "_test.go") && b != "doc.go" {
				src = append(src, b)
			}
		}
		if len(src) == 0 {
			continue // a package of tests only (test/e2e, dashboards): its doc is in a test file
		}
		doc, err := os.ReadFile(filepath.Join(dir, "doc.go"))
		if err != nil {
			t.Errorf("%s: no doc.go", rel)
			continue
		}
		have := map[string]bool{}
		for _, f := range src {
			have[f] = true
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(f) + `\b`).Match(doc) {
				t.Errorf("%s/doc.go does not say what %s holds", rel, f)
			}
		}
		for _, m := range goFile.FindAll(doc, -1) {
			if n := string(m); !have[n] && n != "doc.go" {
				if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
					t.Errorf("%s/doc.go names %s, which is not a file of the package", rel, n)
				}
			}
		}
	}
}
