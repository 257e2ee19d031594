package collector

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// doc.go says what each file of the package holds: a new file that it
// does not name fails here, and so does a name it keeps for a file gone.
func TestDocNamesEveryFile(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "doc.go" {
			continue
		}
		have[f] = true
		if !regexp.MustCompile(`(?m)^//   - (.*[ ,])?` + regexp.QuoteMeta(f) + `[:,]`).Match(doc) {
			t.Errorf("doc.go does not say what %s holds", f)
		}
	}
	for _, m := range regexp.MustCompile(`[a-z_]+\.go\b`).FindAll(doc, -1) {
		if n := string(m); !have[n] && n != "doc.go" && !strings.HasSuffix(n, "_test.go") {
			t.Errorf("doc.go names %s, which is not a file of the package", n)
		}
	}
}
