package manpage

import (
	"bytes"
	"strings"
	"testing"

	"github.com/alecthomas/kingpin/v2"
)

// manPage is what --help-man writes for an application with a multi-line
// version (prometheus/common/version.Print's form) under Template.
func manPage(t *testing.T, ver, buildDate string) string {
	t.Helper()
	saved := kingpin.ManPageTemplate
	defer func() { kingpin.ManPageTemplate = saved }()
	tmpl := Template("ibtracer-x", "trace a path\\hop", ver, buildDate)
	app := kingpin.New("ibtracer-x", "Traces.")
	app.Version("ibtracer-x, version " + ver + "\n  build user: root@host\n  build date: " + buildDate)
	app.Flag("lid", "A LID.").String()
	var out bytes.Buffer
	app.Writer(&out)
	ctx, err := app.ParseContext(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := app.UsageForContextWithTemplate(ctx, 2, tmpl); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestHeader(t *testing.T) {
	for _, tc := range []struct {
		ver, date string
		th        string
	}{
		{"0.1.0", "20261126-16:07:04", `.TH "IBTRACER\-X" 1 "2026\-11\-26" "ibtracer\-x 0.1.0" "User Commands"`},
		{"", "", `.TH "IBTRACER\-X" 1 "" "ibtracer\-x unknown" "User Commands"`},
		{"1.2.3-rc.1", "not a date", `.TH "IBTRACER\-X" 1 "" "ibtracer\-x 1.2.3\-rc.1" "User Commands"`},
	} {
		page := manPage(t, tc.ver, tc.date)
		lines := strings.Split(page, "\n")
		if lines[0] != tc.th {
			t.Errorf("version %q date %q: .TH line\n%s\nwant\n%s", tc.ver, tc.date, lines[0], tc.th)
		}
		if lines[1] != `.SH "NAME"` || lines[2] != `ibtracer\-x \- trace a path\ehop` {
			t.Errorf("NAME section: %q", lines[1:3])
		}
		if strings.Contains(page, "build user") {
			t.Errorf("the version block is in the page:\n%s", page)
		}
		if !strings.Contains(page, `\fB--lid=LID\fR`) {
			t.Errorf("flags missing:\n%s", page)
		}
	}
}

// Use sets kingpin's global template; kingpin's own header is gone.
func TestUse(t *testing.T) {
	saved := kingpin.ManPageTemplate
	defer func() { kingpin.ManPageTemplate = saved }()
	Use("ibtracer", "trace", "")
	if strings.Contains(kingpin.ManPageTemplate, "{{.App.Version}}") || !strings.HasPrefix(
		kingpin.ManPageTemplate[strings.Index(kingpin.ManPageTemplate, ".TH"):], `.TH "IBTRACER" 1 `) {
		t.Fatalf("template header:\n%s", kingpin.ManPageTemplate)
	}
}

// Use may be called again, and at once from several goroutines (a
// command's tests run run() in parallel): the header stays clean.
func TestUseAgain(t *testing.T) {
	saved := kingpin.ManPageTemplate
	defer func() { kingpin.ManPageTemplate = saved }()
	done := make(chan struct{})
	for range 4 {
		go func() { Use("ibtracer", "trace", ""); done <- struct{}{} }()
	}
	for range 4 {
		<-done
	}
	Use("ibtracer", "trace", "")
	if !strings.Contains(kingpin.ManPageTemplate, `.TH "IBTRACER" 1 `) {
		t.Fatalf("template header:\n%.200s", kingpin.ManPageTemplate[strings.Index(kingpin.ManPageTemplate, ".TH"):])
	}
}
