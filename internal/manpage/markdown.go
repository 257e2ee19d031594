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
	var b strings.Builder
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	sectioned := false
	para := []string{}
	flush := func() {
		if len(para) > 0 {
			b.WriteString(".PP\n" + inline(strings.Join(para, " ")) + "\n")
			para = para[:0]
		}
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "# "):
			flush()
		case strings.HasPrefix(l, "## "):
			flush()
			b.WriteString(".SH " + heading(upperText(l[3:])) + "\n")
			sectioned = true
		case strings.HasPrefix(l, "### "):
			flush()
			b.WriteString(".SS " + heading(l[4:]) + "\n")
		case strings.TrimSpace(l) == "":
			flush()
		case strings.HasPrefix(l, "    ") && len(para) == 0:
			if !sectioned {
				b.WriteString(".SH DESCRIPTION\n")
				sectioned = true
			}
			b.WriteString(".PP\n.RS 4\n.nf\n")
			for ; i < len(lines) && (strings.HasPrefix(lines[i], "    ") || strings.TrimSpace(lines[i]) == ""); i++ {
				b.WriteString(line(strings.TrimPrefix(lines[i], "    ")) + "\n")
			}
			i--
			b.WriteString(".fi\n.RE\n")
		case strings.HasPrefix(l, "|"):
			flush()
			for ; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
				cells := tableCells(lines[i])
				if len(cells) == 0 || isRule(cells) || i+1 < len(lines) && isRule(tableCells(lines[i+1])) {
					continue // the rule, and the header row above it
				}
				b.WriteString(".TP\n" + inline(cells[0]) + "\n" + inline(strings.Join(cells[1:], "; ")) + "\n")
			}
			i--
		case strings.HasPrefix(l, "- ") || listNumber.MatchString(l):
			flush()
			tag := `\(bu`
			text := strings.TrimPrefix(l, "- ")
			if m := listNumber.FindStringSubmatch(l); m != nil {
				tag, text = m[1]+".", l[len(m[0]):]
			}
			item := []string{text}
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "  ") && strings.TrimSpace(lines[i+1]) != "" &&
				!strings.HasPrefix(strings.TrimSpace(lines[i+1]), "- ") {
				i++
				item = append(item, strings.TrimSpace(lines[i]))
			}
			b.WriteString(".IP " + tag + " 4\n" + inline(strings.Join(item, " ")) + "\n")
		case strings.HasPrefix(l, "  ") && strings.HasPrefix(strings.TrimSpace(l), "- "):
			flush() // a nested item: indented under its parent
			b.WriteString(".RS 4\n.IP \\(bu 4\n" + inline(strings.TrimPrefix(strings.TrimSpace(l), "- ")))
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "    ") && strings.TrimSpace(lines[i+1]) != "" &&
				!strings.HasPrefix(strings.TrimSpace(lines[i+1]), "- ") {
				i++
				b.WriteString(" " + inline(strings.TrimSpace(lines[i])))
			}
			b.WriteString("\n.RE\n")
		default:
			if !sectioned {
				b.WriteString(".SH DESCRIPTION\n")
				sectioned = true
			}
			para = append(para, strings.TrimSpace(l))
		}
	}
	flush()
	return b.String()
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
