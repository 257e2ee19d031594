package trace

import (
	"sync"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// fastPath is what a repeat trace of an unchanged path needs instead of
// walking again: the last validated path to each DLID, which confirm
// re-checks all at once, and, for Options.ShareValidation, the LFT blocks
// other destinations' traces read (with ShareFacts the facts hold the
// blocks: facts.go).
type fastPath struct {
	paths  *ttlCache[uint16, *cachedPath]
	blocks *ttlCache[lftKey, ibmad.LFTBlock]
	share  bool // Options.ShareValidation > 0
}

func newFastPath(o Options) *fastPath {
	return &fastPath{
		paths:  newTTLCache[uint16, *cachedPath](0, cacheSize, o.Clock.Now),
		blocks: newTTLCache[lftKey, ibmad.LFTBlock](o.ShareValidation, cacheSize, o.Clock.Now),
		share:  o.ShareValidation > 0,
	}
}

// cachedPath is a validated path that a repeat trace can confirm.
type cachedPath struct {
	hops    []Hop
	inPorts [][]uint8 // per hop, the SourceRoute InPort array sent
	srcLID  uint16
	viaSA   bool // read from the SA (sawalk.go): never confirmed by SMPs, walked again
}

// keep keeps p, a validated path to dlid, for the next trace to confirm.
func (f *fastPath) keep(dlid uint16, p *cachedPath) { f.paths.Put(dlid, p) }

// keepBlock keeps b, read afresh, as the shared copy of k, with
// ShareValidation.
func (f *fastPath) keepBlock(k lftKey, b *ibmad.LFTBlock) {
	if f.share {
		f.blocks.Put(k, *b)
	}
}

// sharedBlock is lftBlock for the fast path: with ShareValidation it
// reuses a block another destination's trace read within that time (a
// block holds 64 LIDs), so a route change shows at most that much later.
// With ShareFacts too the facts hold the blocks (facts.go), for
// ShareFacts, and the blocks cache is not filled twice.
func (f *fastPath) sharedBlock(w *walk, guid ibmad.GUID, path ibmad.DRPath, block uint32) (*ibmad.LFTBlock, error) {
	if !f.share || w.t.facts != nil {
		return w.lftBlock(guid, path, block)
	}
	if b, ok := f.blocks.Get(lftKey{guid, block}); ok {
		return &b, nil
	}
	return w.lftBlock(guid, path, block) // shares what it reads
}

// confirm re-checks a cached path with one MAD per hop, all at once: the
// LFT entry for the DLID at every switch, SourceRoute at every agent, the
// LID-routed NodeInfo at every hop its SMA validated, and NodeInfo at a
// destination validated by neither. Any difference, or an agent
// support answer that differs from the path's (a new agent started, or
// one stopped), means walk.
func (f *fastPath) confirm(w *walk) ([]Hop, bool) {
	v := w.t.val
	cp, ok := f.paths.Get(w.dlid)
	if !ok || cp.srcLID != w.src.LID || w.viaSA || cp.viaSA { // SA mode walks: its records are cached (sarecords.go)
		return nil, false
	}
	for i := range cp.hops[1:] {
		if v.mode != ValidateSMA && !v.supportAsBefore(w, &cp.hops[1+i]) {
			return nil, false
		}
	}
	hops := append([]Hop(nil), cp.hops...)

	var mu sync.Mutex
	ok = true
	bad := func() { mu.Lock(); ok = false; mu.Unlock() }
	var wg sync.WaitGroup
	last := len(hops) - 1
	for i := range hops {
		h := &hops[i]
		if h.NodeType == ibmad.NodeTypeSwitch && h.OutPort != 0 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b, err := f.sharedBlock(w, h.NodeGUID, h.DRPath, ibmad.LFTBlockOf(w.dlid))
				if err != nil || b.Port(w.dlid) != h.OutPort {
					bad()
				}
			}()
		}
		if i == 0 {
			continue
		}
		switch {
		case h.Agent == AgentValidated || h.Agent == AgentValidatedOtherLink || h.Agent == AgentIngressUnknown:
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				target := h.LID
				if i == last {
					target = w.dlid
				}
				in := cp.inPorts[i]
				if h.ValidatedBy == BySMA {
					v.smaValidate(w, h, target, len(in), in) // sma.go
				} else {
					v.sourceRoute(w, h, target, len(in), in, false)
				}
				if h.Agent != AgentValidated && h.Agent != AgentIngressUnknown {
					bad()
				}
				settleLink(hops, i) // verdicts.go
			}(i)
		case i == last:
			wg.Add(1)
			go func() {
				defer wg.Done()
				ni, rtt, err := w.nodeInfo(h.DRPath)
				if err != nil || ni.NodeGUID != h.NodeGUID {
					bad()
					return
				}
				h.RTT = rtt
			}()
		}
	}
	wg.Wait()
	nameCheckedLinks(nil, hops) // verdicts.go
	return hops, ok
}

// supportAsBefore says whether hop h of a cached path still has the
// agent support it was validated with. A remembered answer that expired
// (Options.SupportTTL) is asked again, one vendor MAD and no SMP, rather
// than walking the whole path again, which reads NodeInfo, PortInfo,
// SwitchInfo and LFT blocks at every switch (docs/architecture.md, "Load
// on one switch"). An answer that differs from the path's (an agent
// started or stopped), a question not answered, or a hop whose support
// the path does not tell, means walk.
func (v *validator) supportAsBefore(w *walk, h *Hop) bool {
	if _, known := v.knownSupport(h); known {
		return true
	}
	none := h.ValidatedBy == BySMA || h.Agent == AgentUnsupported // auto mode's SMA, or agent mode's "no agent"
	some := h.ValidatedBy == ByAgent && !none
	if !none && !some {
		return false
	}
	s := v.supported(w, h)
	return (none && s == AgentUnsupported) || (some && s == "")
}
