// Package manpage gives both commands a man page with a clean header.
//
// kingpin's --help-man writes the application's version into the .TH line,
// and our version is prometheus/common/version's multi-line block, so
// `man -l` showed "build user: ..." above NAME. A command calls Use once,
// before Parse; --help-man then writes a .TH with the title, the build
// date, the name and version and the manual's name, and a NAME line
// "name \- summary" as man-pages(7) asks. The packages ship what
// --help-man writes (docs/packaging.md).
//
// The package is one file:
//   - manpage.go: Use, and Template, kingpin's man page template with that
//     header.
package manpage
