package trace

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Discovery is how a trace learns the path (docs/architecture.md,
// "SA-only discovery").
type Discovery string

// Discovery modes; their values are the JSON "discovery" field and the
// ibtracer_discovery_mode label.
const (
	// DiscoverySMP walks with directed-route SMPs.
	DiscoverySMP Discovery = "smp"
	// DiscoverySA reads the path from SA records only: for fabrics where
	// only the SM may send SMPs (M_Key protection, HCA SMP firewalls).
	DiscoverySA Discovery = "sa"
	// DiscoveryAuto walks with SMPs and falls back to the SA when the
	// SMPs are refused at the first hop (no answer, or an error status,
	// from the local node, or from a neighbour that is alive: see
	// firstHopRefused). A fallback that traced is remembered for
	// Options.SupportTTL: until then traces go to the SA directly, then
	// SMPs are tried again.
	DiscoveryAuto Discovery = "auto"
)

// ParseDiscovery parses a discovery mode ("" is auto).
func ParseDiscovery(s string) (Discovery, error) {
	switch Discovery(s) {
	case "", DiscoveryAuto:
		return DiscoveryAuto, nil
	case DiscoverySMP, DiscoverySA:
		return Discovery(s), nil
	}
	return "", fmt.Errorf("discovery %q: want smp, sa or auto", s)
}

type atomicCounter = atomic.Int64

// saState is a tracer's SA-mode state: the records its walks share, the
// requests they sent, and, in auto mode, until when SMPs are known to fail.
type saState struct {
	recs       *ttlCache[saKey, []byte]
	saRequests saCounter
	saUntil    atomic.Int64 // unix nanoseconds; 0: SMPs work
	fallbacks  atomic.Int64
}

func newSAState(o Options) *saState {
	return &saState{recs: newTTLCache[saKey, []byte](o.SARecordTTL, cacheSize, o.Clock.Now)}
}

// useSA says whether a new walk reads SA records instead of sending SMPs.
func (t *Tracer) useSA() bool {
	switch t.opts.Discovery {
	case DiscoverySA:
		return true
	case DiscoveryAuto:
		u := t.saUntil.Load()
		return u != 0 && t.opts.Clock.Now().UnixNano() < u
	}
	return false
}

// Mode returns the discovery mode the tracer's next trace uses: smp or sa.
func (t *Tracer) Mode() Discovery {
	if t.useSA() {
		return DiscoverySA
	}
	return DiscoverySMP
}

// Fallbacks counts the auto-mode traces that fell back to the SA.
func (t *Tracer) Fallbacks() int64 { return t.fallbacks.Load() }

// firstHopRefused says whether an SMP walk's failure is the pattern of
// a fabric that does not let this node send SMPs, rather than of a dead
// neighbour: no answer, or an error status, either from the local node
// itself (an HCA's SMP firewall), or from its neighbour while that
// neighbour is alive: the SA knows the link, and the neighbour's
// performance agent (a GMP, which SMP protection does not block) answers
// at the LID the SA gives, asked on the walk's SL.
func (w *walk) firstHopRefused(hops []Hop, e *Error) bool {
	if e == nil || len(hops) > 1 {
		return false
	}
	var se *ibmad.StatusError
	if e.Reason != ReasonTimeout && !errors.As(e.Err, &se) {
		return false
	}
	if len(hops) == 0 {
		return true
	}
	if hops[0].OutPort == 0 || hops[0].NodeType == ibmad.NodeTypeSwitch {
		return false // a switch's own SMPs: its neighbour is not the first hop
	}
	link, err := w.saLinkFrom(w.src.LID, hops[0].OutPort)
	if err != nil {
		return false
	}
	// The probe goes on the walk's SL (addressing.go: the PathRecord's,
	// which may be the only one the path carries), without a GRH: it asks
	// the neighbour's PMA, one link away in our subnet, and a GRH for a
	// remote destination would make a neighbouring router forward it.
	req := &ibmad.Request{Addr: w.addr.GMPAddress(link.toLID, false)}
	_ = ibmad.NewPerfMgtGet(ibmad.AttrClassPortInfo).MarshalTo(req.MAD[:])
	_, err = w.do(req)
	return err == nil // any answer, whatever its status: the neighbour lives
}

// discoverTrace is fullTrace with the discovery mode applied: an SMP walk
// that auto mode sees refused at the first hop is traced again from the
// SA; the SA trace's outcome stands (and is remembered when it traced).
// An SA walk of auto mode's remembered fallback that meets a question
// the SA cannot answer (isSALimit) is traced again with SMPs
// (smpAfterSALimit).
func (t *Tracer) discoverTrace(w *walk, r *Result) (hops []Hop, inPorts [][]uint8, ferr *Error) {
	defer func() { r.ValidationNote = t.validationNote(r.Discovery, hops) }() // sma.go
	hops, inPorts, ferr = t.fullTrace(w)
	r.Discovery = DiscoverySMP
	if w.viaSA {
		r.Discovery = DiscoverySA
		if t.opts.Discovery == DiscoveryAuto && ferr != nil && isSALimit(ferr.Err) {
			return t.smpAfterSALimit(w, r, ferr)
		}
	}
	if w.viaSA || t.opts.Discovery != DiscoveryAuto || !w.firstHopRefused(hops, ferr) {
		return hops, inPorts, ferr
	}
	// addressing.go: w's SL and GRH, fresh when w is
	hops2, inPorts2, ferr2 := t.retrace(w, true, false)
	w.viaSA = true // the mismatch re-walk, if any, reads the SA too
	r.Discovery = DiscoverySA
	t.fallbacks.Add(1)
	if ferr2 == nil {
		t.saUntil.Store(t.opts.Clock.Now().Add(t.opts.SupportTTL).UnixNano())
		return hops2, inPorts2, nil
	}
	ferr2.Msg = fmt.Sprintf("%s (SMPs failed first: %s)", ferr2.Msg, ferr.Msg)
	return hops2, inPorts2, ferr2
}

// smpAfterSALimit traces again with SMPs a walk that auto mode sent to
// the SA and that met the SA's limit (saErr). SMPs that trace end the
// remembered fallback: the next traces walk with SMPs. SMPs that fail
// too fail the trace, naming both.
func (t *Tracer) smpAfterSALimit(w *walk, r *Result, saErr *Error) ([]Hop, [][]uint8, *Error) {
	// addressing.go: w's SL and GRH, fresh when w is
	hops, inPorts, ferr := t.retrace(w, false, false)
	w.viaSA = false // the mismatch re-walk, if any, sends SMPs too
	r.Discovery = DiscoverySMP
	if ferr == nil {
		t.saUntil.Store(0)
		return hops, inPorts, nil
	}
	ferr.Msg = fmt.Sprintf("%s (by SMPs, after the SA could not answer: %s)", ferr.Msg, saErr.Msg)
	return hops, inPorts, ferr
}
