package fabricstr

import (
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// Clean applies the rule to b (docs/architecture.md, "Strings from the
// fabric"); it does not stop at a NUL: callers cut their fixed-size
// fields first.
func Clean(b []byte) string {
	if clean(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && size <= 1:
			sb.WriteString(`\x`)
			sb.WriteByte(hexDigits[b[0]>>4])
			sb.WriteByte(hexDigits[b[0]&0xf])
		case isControl(r):
			sb.WriteByte(' ')
		default:
			sb.Write(b[:size])
		}
		b = b[size:]
	}
	return sb.String()
}

// String applies the rule to s.
func String(s string) string {
	if cleanString(s) {
		return s
	}
	return Clean([]byte(s))
}

// clean says whether b is already what Clean returns: printable ASCII,
// or valid UTF-8 without control characters.
func clean(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f {
			return cleanString(string(b))
		}
	}
	return true
}

func cleanString(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return false
			}
		}
		if isControl(r) {
			return false
		}
	}
	return true
}

// isControl: C0, DEL and C1 (U+0080..U+009F), which no terminal, label
// or page shows as text.
func isControl(r rune) bool { return r < 0x20 || (r >= 0x7f && r <= 0x9f) }
