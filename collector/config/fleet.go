package config

// HopSeries reports whether the destination exports its per-hop and
// path-detail series (hops:, default true).
func (d Destination) HopSeries() bool { return d.Hops == nil || *d.Hops }
