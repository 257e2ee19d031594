package manpage

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/version"
)

// kingpinHeader is the part of kingpin.ManPageTemplate that Use replaces.
const kingpinHeader = ".TH {{.App.Name}} 1 {{.App.Version}} \"{{.App.Author}}\"\n.SH \"NAME\"\n{{.App.Name}}\n"

var (
	// kingpinTemplate is kingpin's template as kingpin set it.
	kingpinTemplate = kingpin.ManPageTemplate
	// mu orders Use's calls: a test runs a command's run() many times at once.
	mu sync.Mutex
)

// Use makes --help-man write a clean header for the command name, whose
// NAME line is "name \- summary", and the command's reference (Markdown,
// see Roff) after the options. It sets kingpin's global ManPageTemplate
// (a process holds one command), and writes it only when it changes.
func Use(name, summary, reference string) {
	t := Template(name, summary, version.Version, version.BuildDate) + "{{`" + Roff(reference) + "`}}"
	mu.Lock()
	defer mu.Unlock()
	if kingpin.ManPageTemplate != t {
		kingpin.ManPageTemplate = t
	}
}

// Template is kingpin.ManPageTemplate with its header replaced: .TH
// "NAME" 1 "DATE" "name VERSION" "User Commands". DATE is the day of
// buildDate (version.BuildDate's form, 20260102-03:04:05), or empty when
// it is not in that form. It panics if kingpin's template no longer has the
// header it replaces (a kingpin upgrade; the tests catch it).
func Template(name, summary, ver, buildDate string) string {
	if !strings.Contains(kingpinTemplate, kingpinHeader) {
		panic("manpage: kingpin.ManPageTemplate has no header to replace")
	}
	date := ""
	if d, err := time.Parse("20060102", strings.SplitN(buildDate, "-", 2)[0]); err == nil {
		date = d.Format("2006-01-02")
	}
	if ver == "" {
		ver = "unknown"
	}
	header := fmt.Sprintf(".TH %s 1 %s %s \"User Commands\"\n.SH \"NAME\"\n%s \\- %s\n",
		roffQuote(strings.ToUpper(name)), roffQuote(date), roffQuote(name+" "+ver), escape(name), escape(summary))
	return strings.Replace(kingpinTemplate, kingpinHeader, header, 1)
}

// roffQuote is s as one quoted roff argument.
func roffQuote(s string) string { return `"` + strings.ReplaceAll(escape(s), `"`, `\(dq`) + `"` }

// escape keeps s's backslashes and hyphens literal in roff.
func escape(s string) string {
	return strings.NewReplacer(`\`, `\e`, `-`, `\-`).Replace(s)
}
