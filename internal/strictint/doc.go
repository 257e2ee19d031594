// Package strictint reads the integers an administrator writes, in the
// configuration and on the command line, one way: decimal digits with an
// optional leading minus and no leading zero, or 0x hex. A fraction
// (12.9), an exponent (1e3) or an infinity is not an integer and is never
// truncated; a form that reads differently elsewhere (017, octal to YAML
// 1.1 and C, decimal to a person; 0o17, 0b11, 1_000, +3) is refused
// rather than guessed (docs/runbook.md, "Numbers").
//
// The package is one file:
//   - strictint.go: Parse and its errors (ErrNotInteger, ErrForm), Message,
//     InRange, and Int and IntVar, the kingpin flag value built on Parse.
package strictint
