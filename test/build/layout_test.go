package build

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The layout limits (docs/architecture.md, "Layout limits"): a
// newcomer finds a type in one place, a package on one screen, and no
// function too tangled to read. They hold for every package of the module.
const (
	maxFilesPerPackage = 25  // non-test .go files in one directory
	maxFilesPerType    = 4   // files holding one type's methods
	maxLinesPerFile    = 450 // lines of a non-test .go file
	maxComplexity      = 30  // cyclomatic complexity of any function, tests included (gocyclo's count)
	maxExporterMethods = 15  // collector.Exporter's methods
)

type sourceFile struct {
	path, dir string
	test      bool
	fset      *token.FileSet
	file      *ast.File
}

func parseModule(t *testing.T) []sourceFile {
	return parseModuleMode(t, 0)
}

func parseModuleMode(t *testing.T, mode parser.Mode) []sourceFile {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var files []sourceFile
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "tools") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, mode)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files = append(files, sourceFile{path: rel, dir: filepath.Dir(rel), test: strings.HasSuffix(p, "_test.go"), fset: fset, file: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("found %d Go files under %s: not the module", len(files), root)
	}
	return files
}

func TestLayoutLimits(t *testing.T) {
	files := parseModule(t)
	perDir := map[string]int{}
	typeFiles := map[string]map[string]bool{} // "dir.Type" → files with its methods
	methods := map[string]int{}
	for _, f := range files {
		for _, d := range f.file.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				if c := complexity(fd); c > maxComplexity {
					t.Errorf("%s:%d: %s has cyclomatic complexity %d (at most %d)", f.path, f.fset.Position(fd.Pos()).Line, fd.Name.Name, c, maxComplexity)
				}
			}
		}
		if f.test {
			continue
		}
		perDir[f.dir]++
		if n := f.fset.File(f.file.Pos()).LineCount(); n > maxLinesPerFile {
			t.Errorf("%s has %d lines (at most %d)", f.path, n, maxLinesPerFile)
		}
		for _, d := range f.file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil {
				continue
			}
			typ := receiverType(fd.Recv.List[0].Type)
			key := f.dir + "." + typ
			if typeFiles[key] == nil {
				typeFiles[key] = map[string]bool{}
			}
			typeFiles[key][filepath.Base(f.path)] = true
			methods[key]++
		}
	}
	for dir, n := range perDir {
		if n > maxFilesPerPackage {
			t.Errorf("%s has %d non-test files (at most %d)", dir, n, maxFilesPerPackage)
		}
	}
	for key, fs := range typeFiles {
		if len(fs) > maxFilesPerType {
			var names []string
			for n := range fs {
				names = append(names, n)
			}
			sort.Strings(names)
			t.Errorf("%s has methods in %d files (at most %d): %v", key, len(fs), maxFilesPerType, names)
		}
	}
	if n, ok := methods["collector.Exporter"]; !ok || n > maxExporterMethods {
		t.Errorf("collector.Exporter has %d methods (at most %d; 0: not found)", n, maxExporterMethods)
	}
}

func receiverType(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return receiverType(x.X)
	case *ast.IndexExpr:
		return receiverType(x.X)
	case *ast.IndexListExpr:
		return receiverType(x.X)
	case *ast.Ident:
		return x.Name
	}
	return fmt.Sprintf("%T", e)
}

// complexity is gocyclo's count: 1, plus one for each if, for, range,
// non-default case or select clause, && and ||.
func complexity(fn *ast.FuncDecl) int {
	c := 1
	ast.Inspect(fn, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if x.List != nil {
				c++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}

// The counter counts: a function known to be tangled is over the limit,
// and a type spread over files is seen (the test cannot pass vacuously).
func TestLayoutCounters(t *testing.T) {
	src := `package p
type T struct{}
func (T) a() {}
func (t *T) b() {}
func f(x, y bool, n []int) {
	if x && y || x {}
	for range n {}
	switch { case x: case y: default: }
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			got = append(got, fmt.Sprint(fd.Name.Name, complexity(fd)))
			if fd.Recv != nil {
				got[len(got)-1] += receiverType(fd.Recv.List[0].Type)
			}
		}
	}
	if want := "[a1T b1T f7]"; fmt.Sprint(got) != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}

// README.md is one page (issue 31): at most 250 lines, short paragraphs
// (a median of at most 45 words), and the two commands a newcomer needs.
func TestReadmeIsOnePage(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if n := strings.Count(text, "\n"); n > 250 {
		t.Errorf("README.md has %d lines (at most 250)", n)
	}
	var words []int
	for _, block := range strings.Split(text, "\n\n") {
		block = strings.TrimLeft(block, "\n")
		if block == "" || strings.HasPrefix(block, "#") || strings.HasPrefix(block, "|") ||
			strings.HasPrefix(block, "    ") || strings.HasPrefix(block, "```") {
			continue
		}
		words = append(words, len(strings.Fields(block)))
	}
	sort.Ints(words)
	if len(words) < 10 {
		t.Fatalf("README.md has %d paragraphs: not the README", len(words))
	}
	if m := words[len(words)/2]; m > 45 {
		t.Errorf("README.md's median paragraph has %d words (at most 45)", m)
	}
	for _, cmd := range []string{"\n    make run\n", "\n    make test\n"} {
		if !strings.Contains(text, cmd) {
			t.Errorf("README.md lacks the command %q", strings.TrimSpace(cmd))
		}
	}
}

// The docs name only Go files that exist: a file a doc points a newcomer
// to (in backquotes, with its directory or by its name alone) is there.
// CHANGELOG.md, a history, may name files that are gone.
func TestDocsNameFilesThatExist(t *testing.T) {
	files := parseModule(t)
	paths, names := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		paths[filepath.ToSlash(f.path)] = true
		names[filepath.Base(f.path)] = true
	}
	docs, _ := filepath.Glob("../../docs/*.md")
	docs = append(docs, "../../README.md")
	ref := regexp.MustCompile("`([A-Za-z0-9_./-]+\\.go)`")
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ref.FindAllStringSubmatch(string(b), -1) {
			p := strings.TrimPrefix(m[1], "./")
			if paths[p] || !strings.Contains(p, "/") && names[p] {
				continue
			}
			t.Errorf("%s names %s, which is not in the module", filepath.Base(doc), p)
		}
	}
}

// Comments name only Go files that exist: a name with a directory is the
// module's path, a bare name is in the comment's package or anywhere in
// the module.
func TestCommentsNameFilesThatExist(t *testing.T) {
	files := parseModuleMode(t, parser.ParseComments)
	paths, names := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		paths[filepath.ToSlash(f.path)] = true
		names[filepath.Base(f.path)] = true
	}
	ref := regexp.MustCompile(`(?:^|[^\w/.])([A-Za-z0-9_./-]*[a-z0-9_]\.go)\b`)
	for _, f := range files {
		for _, cg := range f.file.Comments {
			for _, m := range ref.FindAllStringSubmatch(cg.Text(), -1) {
				p := m[1]
				if paths[p] || paths[filepath.ToSlash(filepath.Join(f.dir, p))] || !strings.Contains(p, "/") && names[p] {
					continue
				}
				t.Errorf("%s:%d: a comment names %s, which is not in the module", f.path, f.fset.Position(cg.Pos()).Line, p)
			}
		}
	}
}
