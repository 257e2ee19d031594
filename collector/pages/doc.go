// Package pages serves the exporter's pages: the landing page (status
// of every destination, suspected and unhealthy links) and /traces (the
// latest trace of each destination as JSON, or drawn hop by hop as HTML;
// filtered by destination, node or link). docs/metrics.md, "Pages",
// describes what they show.
//
// The pages only read. Each request takes one Snapshot (the
// destinations, as immutable Destination values, and the exporter's
// state) from the function it is given, and renders it:
//
//	http.Handle("/traces", pages.Traces(snapshot))
//	http.Handle("/", pages.LandingPage(snapshot, pages.Landing{Name: "ibtracer_exporter", Links: pages.DefaultLinks}))
//
// where snapshot is the exporter's (collector.Exporter serves both).
package pages
