// Package fleet finds the destinations of the configuration's discover:
// selectors (docs/architecture.md, "Discovered destinations"): one loop
// per selector asks the SA's inventory for its ports every refresh
// period, picks the ports the selector names, names them stably and,
// with sample: N, draws N of them, the draw turning one destination at a
// time over the rotation period, each exporter its own draw.
//
// The exporter runs a Fleet: it is the Host the loops ask for the seed of
// the samples and for the device's inventory, and it traces the union of
// the sets (Current) with the configured destinations, reconciling them
// each time the changed function New was given is called:
//
//	f := fleet.New(ctx, logger, &clock, host, reconcile)
//	f.Restart(nil, cfg) // one loop per cfg.Discover selector
//	...
//	f.Restart(cfg, newCfg) // a reload: unchanged selectors keep their sets
//	sets := f.Current()
//
// MatchPorts, Destinations and Sample are the loop's steps, usable alone
// (see the example).
package fleet
