package trace

import (
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// cacheSize bounds every cache of a tracer (a subnet has fewer than 49152
// unicast LIDs).
const cacheSize = 1 << 16

// caches are what a tracer's traces share, each a ttlCache on the
// tracer's clock:
//   - desc, top: a node's description and a switch's LinearFDBTop, which
//     do not expire (a DLID above the cached top re-reads it);
//   - support: whether a node runs the agent, for Options.SupportTTL;
//   - paths: the last validated path to a DLID, which the fast path
//     confirms;
//   - verdicts, blocks: hop verdicts and LFT blocks shared across
//     destinations for Options.ShareValidation (with ShareFacts the
//     facts hold the blocks: fastpath.go).
//
// The SA resolutions (Tracer.resolved, the same type) are kept by resolve.
type caches struct {
	desc     *ttlCache[ibmad.GUID, string]
	top      *ttlCache[ibmad.GUID, uint16]
	support  *ttlCache[ibmad.GUID, bool]
	paths    *ttlCache[uint16, *cachedPath]
	verdicts *ttlCache[verdictKey, verdict]
	blocks   *ttlCache[lftKey, ibmad.LFTBlock]
}

func newCaches(o Options) caches {
	return caches{
		desc:     newTTLCache[ibmad.GUID, string](0, cacheSize, o.Clock.Now),
		top:      newTTLCache[ibmad.GUID, uint16](0, cacheSize, o.Clock.Now),
		support:  newTTLCache[ibmad.GUID, bool](o.SupportTTL, cacheSize, o.Clock.Now),
		paths:    newTTLCache[uint16, *cachedPath](0, cacheSize, o.Clock.Now),
		verdicts: newTTLCache[verdictKey, verdict](o.ShareValidation, cacheSize, o.Clock.Now),
		blocks:   newTTLCache[lftKey, ibmad.LFTBlock](o.ShareValidation, cacheSize, o.Clock.Now),
	}
}

// lftKey names one LFT block of one switch.
type lftKey struct {
	guid  ibmad.GUID
	block uint32
}

// verdictKey identifies a validation: the node, the LID asked, the
// expected route to it, and who was asked (the agent or the SMA).
type verdictKey struct {
	guid   ibmad.GUID
	lid    uint16
	inPort string
	by     Validator
}

type verdict struct {
	agent  AgentStatus
	actual uint8
	rtt    time.Duration
}

// cachedPath is a validated path that a repeat trace can confirm.
type cachedPath struct {
	hops    []Hop
	inPorts [][]uint8 // per hop, the SourceRoute InPort array sent
	srcLID  uint16
}

// forget drops what a failed trace must not reuse, and nothing else: one
// failing destination must not cost the others their shared caches. It
// drops the destination's confirmed path and resolution and, after a
// status 7 (mismatch), the shared verdicts of the nodes on hops, which
// are asked again. The LFT blocks the failed trace's walk read need no
// forgetting: they were read afresh and replaced the shared copies
// (walk.lftBlock).
func (t *Tracer) forget(dlid uint16, d Destination, hops []Hop, mismatch bool) {
	t.paths.Delete(dlid)
	t.resolved.Delete(d)
	if !mismatch {
		return
	}
	on := make(map[ibmad.GUID]bool, len(hops))
	for _, h := range hops {
		on[h.NodeGUID] = true
	}
	t.verdicts.DeleteFunc(func(k verdictKey) bool { return on[k.guid] })
}
