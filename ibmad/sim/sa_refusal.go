package sim

import "github.com/ibtracer/ibtracer_exporter/ibmad"

// SARefusal is what the SA refuses, as a weaker or quirkier SA than the
// default one would (a fault, for the tests of SA-only tracing's
// limits: docs/protocol.md, "SA-only discovery").
type SARefusal struct {
	// LinkLIDMasked: a LinkRecord query by FromLID or ToLID compares the
	// LID it names, masked with the CA ports' LMC (Options.LMC), with the
	// records' LIDs, as OpenSM does with the subnet's LMC: a switch whose
	// port-0 LID is not a multiple of 2^LMC is never found by its LID.
	LinkLIDMasked bool
	// NoTables: every GetTable is answered "method unsupported", with no
	// RMPP transfer (an SA that serves single-record Gets only).
	NoTables bool
}

// SetSARefusal sets what the SA refuses from now on (the zero value:
// nothing).
func (f *Fabric) SetSARefusal(r SARefusal) { f.saRefusal.Store(&r) }

func (f *Fabric) saRefuses() SARefusal {
	if r := f.saRefusal.Load(); r != nil {
		return *r
	}
	return SARefusal{}
}

// linkLIDMasked says whether LinkLIDMasked drops record r from the
// answer to query q: OpenSM finds the port by the LID asked, then
// compares its base LID with that LID masked with the LMC
// (docs/protocol.md, "SA-only discovery", LMC > 0).
func (f *Fabric) linkLIDMasked(q, r *ibmad.LinkRecord, mask uint64) bool {
	if !f.saRefuses().LinkLIDMasked {
		return false
	}
	m := ^(uint16(1)<<(f.opts.LMC&7) - 1)
	return mask&ibmad.LRCompFromLID != 0 && r.FromLID != q.FromLID&m ||
		mask&ibmad.LRCompToLID != 0 && r.ToLID != q.ToLID&m
}
