package strictint

import (
	"errors"
	"testing"

	"github.com/alecthomas/kingpin/v2"
)

func TestParse(t *testing.T) {
	for s, want := range map[string]int64{"0": 0, "17": 17, "-5": -5, "0x11": 17, "0XfF": 255, "49151": 49151} {
		v, err := Parse(s)
		if err != nil || v.Int64() != want {
			t.Errorf("Parse(%q) = %v, %v; want %d", s, v, err, want)
		}
	}
	for _, s := range []string{"12.9", "1.7", "1e3", "1E3", "-2.5", ".5", "12.", ".inf", "-.inf", ".nan", "NaN", "49151.0"} {
		if _, err := Parse(s); !errors.Is(err, ErrNotInteger) {
			t.Errorf("Parse(%q): %v, want ErrNotInteger", s, err)
		}
	}
	for _, s := range []string{"017", "00", "-0x1", "0o17", "0b11", "1_000", "+3", "", " 1", "1 ", "0x", "abc", "--1"} {
		if _, err := Parse(s); !errors.Is(err, ErrForm) {
			t.Errorf("Parse(%q): %v, want ErrForm", s, err)
		}
	}
}

func TestIntFlag(t *testing.T) {
	for _, tc := range []struct {
		arg, err string
		want     int
	}{
		{"15", "", 15},
		{"0x0", "", 0},
		{"200", "ibtracer: error: --sl 200: want 0..15, try --help", 0},
		{"-1", "ibtracer: error: --sl -1: want 0..15, try --help", 0},
		{"1.7", "ibtracer: error: --sl 1.7 is not an integer, try --help", 0},
		{"1e1", "ibtracer: error: --sl 1e1 is not an integer, try --help", 0},
		{"010", "ibtracer: error: --sl 010: write integers in decimal or as 0x hex, try --help", 0},
	} {
		app := kingpin.New("ibtracer", "")
		v := 7
		IntVar(app.Flag("sl", ""), &v, 0, 15)
		_, err := app.Parse([]string{"--sl=" + tc.arg})
		got := ""
		if err != nil {
			got = "ibtracer: error: " + err.Error() + ", try --help"
		}
		if got != tc.err || (tc.err == "" && v != tc.want) {
			t.Errorf("--sl %s: %q (value %d), want %q (value %d)", tc.arg, got, v, tc.err, tc.want)
		}
	}
}
