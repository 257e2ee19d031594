package manpage

import (
	"fmt"
	"regexp"
	"strings"
)

// Roff turns a command's reference, written in the Markdown the docs use
// (docs/cli.md, docs/exporter.md), into man(7) sections that follow
// kingpin's OPTIONS: the text before the first "## " heading becomes
// DESCRIPTION, each "## " heading a .SH, each "### " a .SS; paragraphs,
// "- " lists, indented code blocks and tables (one .TP per row, the first
// cell as its tag) keep their shape. Inline code and **bold** print bold,
// links print their text. The "# " title is dropped: NAME says it.
//
// The result holds no backquote and no "{{", so Use can put it in
// kingpin's template as a raw string.
func Roff(md string) string {
	w := &roffWriter{lines: strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")}
	for w.i = 0; w.i < len(w.lines); w.i++ {
		w.block(w.lines[w.i])
	}
	w.flush()
	return w.b.String()
}

// roffWriter walks the Markdown's lines; a block that spans lines moves i
// to its last.
type roffWriter struct {
	b         strings.Builder
	lines     []string
	i         int
	sectioned bool     // a .SH has been written
	para      []string // the running paragraph's lines
}

func (w *roffWriter) block(l string) {
	trimmed := strings.TrimSpace(l)
	switch {
	case strings.HasPrefix(l, "# "):
		w.flush()
	case strings.HasPrefix(l, "## "):
		w.flush()
		w.b.WriteString(".SH " + heading(upperText(l[3:])) + "\n")
		w.sectioned = true
	case strings.HasPrefix(l, "### "):
		w.flush()
		w.b.WriteString(".SS " + heading(l[4:]) + "\n")
	case trimmed == "":
		w.flush()
	case strings.HasPrefix(l, "    ") && len(w.para) == 0:
		w.codeBlock()
	case strings.HasPrefix(l, "|"):
		w.flush()
		w.table()
	case strings.HasPrefix(l, "- ") || listNumber.MatchString(l):
		w.flush()
		w.listItem(l)
	case strings.HasPrefix(l, "  ") && strings.HasPrefix(trimmed, "- "):
		w.flush() // a nested item: indented under its parent
		w.b.WriteString(".RS 4\n.IP \\(bu 4\n" + inline(strings.Join(w.continued(strings.TrimPrefix(trimmed, "- "), "    "), " ")) + "\n.RE\n")
	default:
		w.section()
		w.para = append(w.para, trimmed)
	}
}

// section opens DESCRIPTION for text before the first heading.
func (w *roffWriter) section() {
	if !w.sectioned {
		w.b.WriteString(".SH DESCRIPTION\n")
		w.sectioned = true
	}
}

func (w *roffWriter) flush() {
	if len(w.para) > 0 {
		w.b.WriteString(".PP\n" + inline(strings.Join(w.para, " ")) + "\n")
		w.para = w.para[:0]
	}
}

// codeBlock writes the indented lines from i on, blank ones among them,
// as they are.
func (w *roffWriter) codeBlock() {
	w.section()
	w.b.WriteString(".PP\n.RS 4\n.nf\n")
	for ; w.i < len(w.lines) && (strings.HasPrefix(w.lines[w.i], "    ") || strings.TrimSpace(w.lines[w.i]) == ""); w.i++ {
		w.b.WriteString(line(strings.TrimPrefix(w.lines[w.i], "    ")) + "\n")
	}
	w.i--
	w.b.WriteString(".fi\n.RE\n")
}

// table writes a row per .TP, the first cell its tag, without the header
// row and the rule under it.
func (w *roffWriter) table() {
	for ; w.i < len(w.lines) && strings.HasPrefix(w.lines[w.i], "|"); w.i++ {
		cells := tableCells(w.lines[w.i])
		if isRule(cells) || w.i+1 < len(w.lines) && isRule(tableCells(w.lines[w.i+1])) {
			continue
		}
		w.b.WriteString(".TP\n" + inline(cells[0]) + "\n" + inline(strings.Join(cells[1:], "; ")) + "\n")
	}
	w.i--
}

// listItem writes a "- " or "1. " item with the lines that continue it.
func (w *roffWriter) listItem(l string) {
	tag, text := `\(bu`, strings.TrimPrefix(l, "- ")
	if m := listNumber.FindStringSubmatch(l); m != nil {
		tag, text = m[1]+".", l[len(m[0]):]
	}
	w.b.WriteString(".IP " + tag + " 4\n" + inline(strings.Join(w.continued(text, "  "), " ")) + "\n")
}

// continued is first and the following lines indented by indent that
// are neither blank nor a new item; i moves to the last of them.
func (w *roffWriter) continued(first, indent string) []string {
	item := []string{first}
	for w.i+1 < len(w.lines) {
		next := w.lines[w.i+1]
		t := strings.TrimSpace(next)
		if !strings.HasPrefix(next, indent) || t == "" || strings.HasPrefix(t, "- ") {
			break
		}
		w.i++
		item = append(item, t)
	}
	return item
}

var (
	listNumber = regexp.MustCompile(`^([0-9]+)\. `)
	link       = regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)`)
	code       = regexp.MustCompile("`([^`]*)`")
	bold       = regexp.MustCompile(`\*\*([^*]+)\*\*`)
)

// tableCells splits a Markdown table row; "\|" is a pipe inside a cell.
func tableCells(row string) []string {
	row = strings.TrimSpace(strings.ReplaceAll(row, `\|`, "\x00"))
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	var cells []string
	for _, c := range strings.Split(row, "|") {
		cells = append(cells, strings.TrimSpace(strings.ReplaceAll(c, "\x00", "|")))
	}
	return cells
}

// isRule reports a table's |---|---| line.
func isRule(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, "-: ") != "" || c == "" {
			return false
		}
	}
	return len(cells) > 0
}

// upperText is a heading in capitals, as man pages set them, but for its
// code spans: "Multicast: `-m MLID`" keeps its flag's case.
func upperText(s string) string {
	parts := strings.Split(s, "`")
	for i := 0; i < len(parts); i += 2 {
		parts[i] = strings.ToUpper(parts[i])
	}
	return strings.Join(parts, "`")
}

// heading is a heading's text as one quoted roff argument.
func heading(s string) string { return `"` + strings.ReplaceAll(line(plain(s)), `"`, `\(dq`) + `"` }

// plain is a heading's text without its Markdown marks.
func plain(s string) string {
	s = link.ReplaceAllString(s, "$1")
	return strings.NewReplacer("`", "", "**", "").Replace(strings.TrimSpace(s))
}

// inline is a line of running text in roff: marks become fonts, links
// their text, and nothing in it can start a request.
func inline(s string) string {
	s = link.ReplaceAllString(s, "$1")
	// Fonts are marked by bytes that escape leaves alone, then set.
	s = code.ReplaceAllString(s, "\x01$1\x02")
	s = bold.ReplaceAllString(s, "\x01$1\x02")
	return strings.NewReplacer("\x01", `\fB`, "\x02", `\fR`).Replace(line(s))
}

// line is s with roff's special characters made literal: backslashes,
// hyphens, a leading dot or quote, and backquotes (which the template
// cannot hold).
func line(s string) string {
	s = strings.NewReplacer(`\`, `\e`, `-`, `\-`, "`", `\(ga`, "{{", `{\&{`).Replace(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, `\[u%04X]`, r) // groff's Unicode escape: the page needs no -Tutf8 input
		}
	}
	return b.String()
}
