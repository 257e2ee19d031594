// Package localize turns what an exporter's traces found into per-link
// evidence (docs/metrics.md, "Link evidence"): for every link that the
// current or the previous path of a destination crosses, how many paths
// cross it, how many of those are bad now and can be explained by it,
// and the exporter's suspicion of it. It is pure: no I/O, no clock, no
// MADs; the collector builds a Path per destination from its trace
// result and feeds an Accumulator at every scrape, and the fleet
// evaluation feeds the same types from many simulated exporters.
//
// The scheme (docs/metrics.md, "Link evidence", says it for operators):
// a bad path names the links that can explain it (its suspects: the
// links it crossed before it failed and the one it failed on, the link
// at whose far end it arrived on a wrong port, the links in front of a
// hop that did not answer, an unhealthy link, every link for a slow
// path). Links that a good path crosses now are exonerated, unless that
// would leave the bad path with no suspect at all (a link that drops a
// share of its packets passes some paths). Each bad path then gives 1/h
// to each of its h remaining suspects, as 007 (NSDI 2018) votes; the
// sum is the link's suspicion. Evidence.Votes keeps 007's plain votes
// (1/h to every link a bad path crosses, nobody exonerated), as a
// baseline to compare against.
//
// What each file holds:
//   - link.go: Link, the link key (both ends' node GUID and port, the
//     smaller node GUID first, as the link-health series and hop_info
//     label it), its order and its label values.
//   - path.go: Path, one destination's evidence (the links it crosses,
//     whether it is bad now and why, its suspects), and Cause.
//   - accumulate.go: Accumulator, which sums the paths into Evidence per
//     link, and the ranking of links by suspicion.
package localize
