// Package manpage makes a command's --help-man print a man page with a
// clean header and the command's reference after its options.
//
// kingpin's own template puts the application's version, which for us is
// prometheus/common/version's multi-line block, in the .TH line, and has
// no room for prose. Call Use once, before Parse, with the command's name,
// a one-line summary and its reference in Markdown (package docs embeds
// docs/cli.md and docs/exporter.md):
//
//	manpage.Use("ibtracer", "trace InfiniBand routes hop by hop", docs.CLI)
//	kingpin.MustParse(app.Parse(os.Args[1:]))
//
// `ibtracer --help-man` then writes .TH "IBTRACER" 1 "DATE" "ibtracer
// VERSION" "User Commands", a NAME line as man-pages(7) asks, kingpin's
// options, and the reference's sections (Roff says how Markdown maps to
// roff). The packages ship what --help-man writes (docs/packaging.md), so
// the Markdown reference is the man page's one source.
package manpage
