package strictint

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"

	"github.com/alecthomas/kingpin/v2"
)

var (
	// ErrNotInteger: s is a fraction, an exponent, an infinity or NaN.
	ErrNotInteger = errors.New("is not an integer")
	// ErrForm: s is an integer in a form refused here.
	ErrForm = errors.New("write integers in decimal or as 0x hex")
)

var (
	decimalRe = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
	hexRe     = regexp.MustCompile(`^0[xX][0-9a-fA-F]+$`)
	floatRe   = regexp.MustCompile(`^[-+]?([0-9][0-9_]*)?(\.[0-9_]*)?([eE][-+]?[0-9]+)?$`)
)

// Parse reads s; its errors are ErrNotInteger or ErrForm.
func Parse(s string) (*big.Int, error) {
	switch {
	case decimalRe.MatchString(s):
		v, _ := new(big.Int).SetString(s, 10)
		return v, nil
	case hexRe.MatchString(s):
		v, _ := new(big.Int).SetString(s[2:], 16)
		return v, nil
	case isFloat(s):
		return nil, ErrNotInteger
	}
	return nil, ErrForm
}

// isFloat reports whether s reads as a number with a fraction or an
// exponent, or as an infinity or NaN (YAML's .inf, .nan).
func isFloat(s string) bool {
	l := strings.ToLower(strings.TrimLeft(s, "+-"))
	switch l {
	case ".inf", "inf", ".nan", "nan", "infinity":
		return true
	}
	return strings.ContainsAny(s, ".eE") && floatRe.MatchString(s) && strings.ContainsAny(s, "0123456789")
}

// Message is what err, an error of Parse, says about s: "12.9 is not an
// integer", "017: write integers in decimal or as 0x hex".
func Message(s string, err error) string {
	if errors.Is(err, ErrNotInteger) {
		return s + " " + err.Error()
	}
	return s + ": " + err.Error()
}

// InRange reports whether min <= v <= max.
func InRange(v *big.Int, min int64, max uint64) bool {
	return v.Cmp(big.NewInt(min)) >= 0 && v.Cmp(new(big.Int).SetUint64(max)) <= 0
}

// Int is a kingpin flag value: an int within [Min, Max], read by Parse;
// Flag names it in errors ("--sl").
type Int struct {
	P        *int
	Min, Max int
	Flag     string
}

// Set parses s; its error names the flag and what it wants.
func (v *Int) Set(s string) error {
	n, err := Parse(s)
	if err != nil {
		return fmt.Errorf("%s %s", v.Flag, Message(s, err))
	}
	if !InRange(n, int64(v.Min), uint64(v.Max)) {
		return fmt.Errorf("%s %s: want %d..%d", v.Flag, s, v.Min, v.Max)
	}
	*v.P = int(n.Int64())
	return nil
}

func (v *Int) String() string { return fmt.Sprint(*v.P) }

// IntVar makes the flag c an int within [min, max], stored in p.
func IntVar(c *kingpin.FlagClause, p *int, min, max int) {
	c.SetValue(&Int{P: p, Min: min, Max: max, Flag: "--" + c.Model().Name})
}
