package manpage

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/alecthomas/kingpin/v2"

	"github.com/ibtracer/ibtracer_exporter/docs"
	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
)

func TestRoffShapes(t *testing.T) {
	md := "# Title\n\nIntro `--flag` and **bold** and [a link](x.md#y).\n\n" +
		"## Choosing `-m MLID`\n\n- one\n  continued\n  - nested\n- two\n\n1. first\n\n" +
		"    code -x {{ `q` \\n\n\n| a | b | c |\n|---|---|---|\n| `x` | y \\| z | w |\n\n" +
		".leading dot\n\n### Sub\n\n→ arrow\n"
	got := Roff(md)
	for _, want := range []string{
		".SH DESCRIPTION\n.PP\nIntro \\fB\\-\\-flag\\fR and \\fBbold\\fR and a link.\n",
		`.SH "CHOOSING \-m MLID"` + "\n",
		".IP \\(bu 4\none continued\n",
		".RS 4\n.IP \\(bu 4\nnested\n.RE\n",
		".IP 1. 4\nfirst\n",
		".nf\ncode \\-x {\\&{ \\(gaq\\(ga \\en\n",
		".TP\n\\fBx\\fR\ny | z; w\n",
		".PP\n\\&.leading dot\n",
		`.SS "Sub"` + "\n",
		`\[u2192] arrow`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Roff lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"Title", "`", "{{", "| a |", "---"} {
		if strings.Contains(got, bad) {
			t.Errorf("Roff holds %q:\n%s", bad, got)
		}
	}
}

// The shipped references make man pages that groff reads without a
// warning, with every "## " section of the Markdown as a section of the
// page, after kingpin's options.
func TestReferencesAreCleanManPages(t *testing.T) {
	groff := promtest.RequireTool(t, "groff", "groff-base")
	saved := kingpin.ManPageTemplate
	defer func() { kingpin.ManPageTemplate = saved }()
	for name, ref := range map[string]string{"ibtracer": docs.CLI, "ibtracer_exporter": docs.Exporter} {
		Use(name, "summary", ref)
		app := kingpin.New(name, "Help.")
		app.Flag("lid", "A LID.").String()
		var page bytes.Buffer
		app.Writer(&page)
		ctx, err := app.ParseContext(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := app.UsageForContextWithTemplate(ctx, 2, kingpin.ManPageTemplate); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(groff, "-ww", "-man", "-z")
		cmd.Stdin = bytes.NewReader(page.Bytes())
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("%s: groff: %v\n%s", name, err, out)
		}
		s := page.String()
		if !strings.Contains(s, `\fB--lid=LID\fR`) || strings.Index(s, ".SH DESCRIPTION") < strings.Index(s, "lid=LID") {
			t.Errorf("%s: the options, then the reference:\n%.600s", name, s)
		}
		for _, h := range regexp.MustCompile(`(?m)^## (.*)$`).FindAllStringSubmatch(ref, -1) {
			if !strings.Contains(s, ".SH "+heading(upperText(h[1]))) {
				t.Errorf("%s: section %q missing", name, h[1])
			}
		}
	}
}
