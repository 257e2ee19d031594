// Package docs carries the commands' references into their binaries: the
// Markdown of cli.md and exporter.md, which --help-man prints as the man
// page's sections after the options (internal/manpage). The files are the
// one source; the man pages the packages ship are made from them.
//
//	manpage.Use("ibtracer", "trace InfiniBand routes hop by hop", docs.CLI)
package docs

import _ "embed"

// CLI is docs/cli.md: the ibtracer command's reference.
//
//go:embed cli.md
var CLI string

// Exporter is docs/exporter.md: the exporter's reference.
//
//go:embed exporter.md
var Exporter string
