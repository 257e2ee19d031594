// Package localize turns what an exporter's traces found into per-link
// evidence (docs/metrics.md, "Link evidence"): for every link that the
// current or the previous path of a destination crosses, how many paths
// cross it, how many of those are bad now and can be explained by it,
// and the exporter's suspicion of it. It is pure: no I/O, no clock, no
// MADs; the collector builds a Path per destination from its trace
// results (FromTrace) and feeds an Accumulator at every scrape, and the fleet
// evaluation feeds the same types from many simulated exporters.
//
// The scheme (docs/metrics.md, "Link evidence", says it for operators):
// a bad path names the links that can explain it (its suspects: the link
// a failed trace could not get past, which its previous path names, else
// the links it crossed; the link at whose far end it arrived on a wrong
// port; the links in front of a hop that did not answer; an unhealthy
// link; every link for a slow path: FromTrace). A multicast path is no
// evidence, and a router that does not forward names no link. Each bad path has one
// vote, shared among its suspects as 007 (NSDI 2018) shares it, 1/h to
// each of h suspects, but weighted by how much of each suspect's traffic
// is bad: a suspect's part is its share of bad paths (its bad paths over
// those plus the good paths whose current trace crosses it) over the sum
// of those shares among the path's suspects. Links that good paths cross
// are so exonerated in proportion: a link that only bad paths cross
// keeps its full part, a link a hundred good paths also cross keeps
// little, and a link that drops a share of its packets (and passes some
// paths) is not cleared outright. With no good path at all the parts are
// 007's 1/h. The sum of a link's parts is its suspicion; over all links
// it sums to the number of bad paths. Evidence.Votes keeps 007's plain
// votes (1/h to every link a bad path crosses, no weights), as a
// baseline to compare against.
//
// Use: build one Path per destination, from its trace with FromTrace or by
// hand with Blame, add them all to an Accumulator, and read the Evidence
// per link, or Rank it by suspicion (see the example):
//
//	var a localize.Accumulator
//	for _, in := range traces {
//		a.Add(localize.FromTrace(in))
//	}
//	top := localize.Rank(a.Evidence(), localize.BySuspicion)
package localize
