package fabricstr

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"host1 mlx5_0", "host1 mlx5_0"},
		{"Müller rack 3", "Müller rack 3"},
		{`q"uo\te'`, `q"uo\te'`},
		{"ctl\x01\x07tab\there\x7f", "ctl  tab here "},
		{"c1\u0085x", "c1 x"},
		{strings.Repeat("\xff", 3), `\xff\xff\xff`},
		{strings.Repeat("x", 63) + "\xc3", strings.Repeat("x", 63) + `\xc3`},
		{"ok\xe2\x82", `ok\xe2\x82`},
		{"\xef\xbf\xbd", "\ufffd"}, // a real U+FFFD is valid UTF-8: kept
		{"", ""},
	} {
		got := Clean([]byte(c.in))
		if got != c.want {
			t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
		}
		if s := String(c.in); s != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, s, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Clean(%q) = %q: not valid UTF-8", c.in, got)
		}
		if again := String(got); again != got {
			t.Errorf("not idempotent: String(%q) = %q", got, again)
		}
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"host1", "\xff\xfe", "a\x00b", "é", strings.Repeat("x", 63) + "\xc3"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := Clean(b)
		if !utf8.ValidString(got) {
			t.Fatalf("Clean(%q) = %q: not valid UTF-8", b, got)
		}
		for _, r := range got {
			if isControl(r) {
				t.Fatalf("Clean(%q) = %q: keeps control character %U", b, got, r)
			}
		}
		if String(got) != got {
			t.Fatalf("Clean(%q) = %q is not a fixed point", b, got)
		}
	})
}

func BenchmarkCleanASCII(b *testing.B) {
	in := []byte("compute042 mlx5_0 HCA-1 rack 13 row 4")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = Clean(in)
	}
}
