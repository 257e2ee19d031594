// Package fabricstr holds the one rule for text that comes from the
// fabric or from a file (node descriptions, node-name-map names): how it
// becomes a string that metrics, JSON, HTML, logs and the CLI all show
// the same way, and that `/traces?destination=` finds again.
//
// The rule (docs/architecture.md, "Strings from the fabric"):
//   - valid UTF-8 that prints is kept as it is, quotes and backslashes
//     included;
//   - a control character (C0, DEL, C1) becomes a space, as ibtracert's
//     clean_nodedesc does for the bytes it cannot print;
//   - a byte that is not part of valid UTF-8 (64 bytes of 0xff, a
//     multi-byte character cut by the 64-byte limit) becomes the four
//     characters \xNN, so that two descriptions that differ only in such
//     bytes keep different names.
//
// The result is always valid UTF-8, so a Prometheus label never drops it.
//
// The package is one file:
//   - fabricstr.go: Clean (bytes) and String (a string), the rule above.
package fabricstr
