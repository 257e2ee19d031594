package collector

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
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

// matchPorts returns the ports selector s picks from the inventory, in
// port GUID order (then port number), without the exporter's own port
// (self). CA ports need a LID; a switch is its port 0.
func matchPorts(s *config.Selector, ports []InventoryPort, self uint64) []InventoryPort {
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

func hash64(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}

// rotationEpoch is the number of the sample period now falls in. Each
// exporter's periods start at its own offset within rotate (a hash of its
// seed), so that a fleet does not swap its samples all at once.
func rotationEpoch(now time.Time, rotate time.Duration, seed string, sel int) int64 {
	if rotate <= 0 {
		return 0
	}
	off := time.Duration(hash64(seed, "rotate", strconv.Itoa(sel)) % uint64(rotate))
	return int64(now.Add(-off).Sub(time.Unix(0, 0)) / rotate)
}

// nextRotation is when the period after now's starts.
func nextRotation(now time.Time, rotate time.Duration, seed string, sel int) time.Time {
	off := time.Duration(hash64(seed, "rotate", strconv.Itoa(sel)) % uint64(rotate))
	ep := rotationEpoch(now, rotate, seed, sel)
	return time.Unix(0, 0).Add(time.Duration(ep+1)*rotate + off)
}

// sampleDestinations returns n of the destinations (all when n is 0 or
// at least their number): a pseudo-random choice that depends on the seed
// (the exporter's port GUID), the selector and the rotation period only,
// so that exporters choose differently and each changes its choice every
// period. The result keeps the destinations' order.
func sampleDestinations(ds []config.Destination, n int, seed string, sel int, epoch int64) []config.Destination {
	if n <= 0 || n >= len(ds) {
		return ds
	}
	r := rand.New(rand.NewPCG(hash64(seed, strconv.Itoa(sel)), uint64(epoch)))
	idx := r.Perm(len(ds))[:n]
	sort.Ints(idx)
	out := make([]config.Destination, n)
	for i, k := range idx {
		out[i] = ds[k]
	}
	return out
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

// discoveredDestinations turns the selected ports (all of them, before
// any sampling, so that names do not depend on the sample) into
// destinations, traced by LID, named stably; two ports that would share a
// name get their port GUID appended.
func discoveredDestinations(s *config.Selector, ports []InventoryPort, names nodenamemap.Map) []config.Destination {
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
