package fleet

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"time"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/nodenamemap"
)

// InventoryPort is one port the SA knows: a NodeRecord joined with the
// port's PortInfoRecord.
type InventoryPort struct {
	NodeGUID, PortGUID uint64
	LID                uint16
	Port               uint8
	NodeType           ibmad.NodeType
	NodeDesc           string
}

// MatchPorts returns the ports selector s picks from the inventory, in
// port GUID order (then port number), without the exporter's own port
// (self). CA ports need a LID; a switch is its port 0.
func MatchPorts(s *config.Selector, ports []InventoryPort, self uint64) []InventoryPort {
	var out []InventoryPort
	for _, p := range ports {
		if p.LID == 0 || p.LID >= 0xC000 || (self != 0 && p.PortGUID == self) {
			continue
		}
		ca := p.NodeType == ibmad.NodeTypeCA && p.Port != 0
		var ok bool
		switch {
		case s.All:
			ok = ca
		case s.NodeType == "ca":
			ok = ca
		case s.NodeType == "switch":
			ok = p.NodeType == ibmad.NodeTypeSwitch && p.Port == 0
		case s.Regexp != nil:
			ok = ca && s.Regexp.MatchString(p.NodeDesc)
		case s.GUIDs != nil:
			ok = ca && s.GUIDs[p.NodeGUID]
		}
		if ok {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].PortGUID != out[j].PortGUID {
			return out[i].PortGUID < out[j].PortGUID
		}
		return out[i].Port < out[j].Port
	})
	return out
}

// Hash64 is a well-mixed 64-bit hash of parts: the fleet's scores, and
// any spread that must differ between nodes and names (the scheduler's
// start window) without going together with another hash of them.
func Hash64(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	// FNV's last bytes barely reach its high bits: mix (splitmix64's
	// finalizer) so that scores that differ only in the period differ.
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Sample returns n of the destinations (all when n is 0 or
// at least their number), in their order: the n whose scores are lowest,
// where a destination's score is a hash of the seed (the exporter's port
// GUID), the selector, the destination and its rotation period. Each
// destination's period starts at its own offset within rotate, so the
// sample changes one destination at a time, spread evenly over the
// period, never all at once; over one period every score is drawn again.
// Exporters (seeds) choose independently.
func Sample(ds []config.Destination, n int, seed string, sel int, now time.Time, rotate time.Duration) []config.Destination {
	if n <= 0 || n >= len(ds) {
		return ds
	}
	type scored struct {
		i     int
		score uint64
	}
	sc := make([]scored, len(ds))
	si := strconv.Itoa(sel)
	for i, d := range ds {
		var ep int64
		if rotate > 0 {
			off := time.Duration(Hash64(seed, si, d.Name, "offset") % uint64(rotate))
			ep = int64(now.Add(-off).Sub(time.Unix(0, 0)) / rotate)
		}
		sc[i] = scored{i, Hash64(seed, si, d.Name, strconv.FormatInt(ep, 10))}
	}
	sort.Slice(sc, func(a, b int) bool { return sc[a].score < sc[b].score })
	idx := make([]int, n)
	for k := range idx {
		idx[k] = sc[k].i
	}
	sort.Ints(idx)
	out := make([]config.Destination, n)
	for k, i := range idx {
		out[k] = ds[i]
	}
	return out
}

// resampleEvery is how often a sampled selector draws its sample again:
// often enough that the destinations whose period turned are replaced
// soon (a quarter of the mean time between two turns), at most once a
// second.
func resampleEvery(rotate time.Duration, n int) time.Duration {
	d := rotate / time.Duration(4*n)
	if d < time.Second {
		d = time.Second
	}
	return d
}

// discoveredName is a port's stable destination name: its node-name-map
// name, or its node description; with "/port" for a CA port unless the
// node-name-map name stands for a node with this one port selected.
func discoveredName(p InventoryPort, names nodenamemap.Map, portsOfNode int) string {
	if n := names.Name(p.NodeGUID); n != "" {
		if portsOfNode > 1 && p.Port != 0 {
			return fmt.Sprintf("%s/%d", n, p.Port)
		}
		return n
	}
	base := p.NodeDesc
	if base == "" {
		base = ibmad.GUID(p.NodeGUID).String()
	}
	if p.Port == 0 {
		return base
	}
	return fmt.Sprintf("%s/%d", base, p.Port)
}

// Destinations turns the selected ports (all of them, before
// any sampling, so that names do not depend on the sample) into
// destinations, traced by LID, named stably; two ports that would share a
// name get their port GUID appended.
func Destinations(s *config.Selector, ports []InventoryPort, names nodenamemap.Map) []config.Destination {
	perNode := map[uint64]int{}
	for _, p := range ports {
		perNode[p.NodeGUID]++
	}
	hops := s.HopSeries()
	out := make([]config.Destination, 0, len(ports))
	seen := map[string]int{}
	for _, p := range ports {
		name := discoveredName(p, names, perNode[p.NodeGUID])
		seen[name]++
		out = append(out, config.Destination{Name: name, LID: p.LID, Interval: s.Interval, Labels: s.Labels, Hops: &hops})
	}
	for i, p := range ports {
		if seen[out[i].Name] > 1 {
			out[i].Name += "@" + ibmad.GUID(p.PortGUID).String()
		}
	}
	return out
}
