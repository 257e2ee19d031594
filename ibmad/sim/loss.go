package sim

import (
	"encoding/binary"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// flight is one MAD's trip through the fabric, from one Send to wherever
// it ends. It gives the trip's drop decisions their key, and records
// whether the MAD reached anyone, so that a lost one can be reported at
// once (Options.ReportLoss).
//
// A drop decision on a lossy port (SetDropRate) is a hash of the fabric's
// Seed, the MAD (its sender's port, its destination LID, its bytes without
// the TID, and how many times that sender sent those bytes before) and
// the port. It does not depend on the order in which concurrent senders
// reach the fabric, nor on the TIDs the engine draws at random: the same
// fabric, seed and requests lose the same MADs in every run, which is
// what makes a fleet evaluation over many goroutines repeatable. A
// retry of a lost request is another sending of the same bytes, so it
// gets a draw of its own.
type flight struct {
	t         *Transport
	p         *ibmad.Packet
	key       uint64 // 0 until a lossy port asks for it
	delivered bool   // handed to a transport (or to the SA's RMPP sender)
}

// draw is a number below one million for the MAD of fl leaving through
// port out, to compare with the port's drop rate in parts per million.
func (fl *flight) draw(out *Port) uint32 {
	if fl.key == 0 {
		fl.key = fl.t.sendingKey(fl.t.f.opts.Seed, fl.p)
	}
	z := mix64(fl.key ^ mix64(uint64(out.Node.GUID)^uint64(out.Num)<<56))
	return uint32(z>>32) % 1_000_000
}

// sendingKey is the key of one sending of p by t: the hash of what p is
// and where it goes, and of how many times t sent it before.
func (t *Transport) sendingKey(seed uint64, p *ibmad.Packet) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037) ^ seed
	var hdr [12]byte
	binary.BigEndian.PutUint64(hdr[:], uint64(t.port.GUID)^uint64(t.node.GUID))
	hdr[8] = t.port.Num
	binary.BigEndian.PutUint16(hdr[9:], p.Addr.LID)
	for _, b := range hdr {
		h = (h ^ uint64(b)) * prime
	}
	for i, b := range p.MAD {
		if i >= 8 && i < 16 { // the TID: drawn at random, a new one per attempt
			continue
		}
		h = (h ^ uint64(b)) * prime
	}
	t.smu.Lock()
	if t.sent == nil || len(t.sent) >= sentMax {
		t.sent = map[uint64]uint32{}
	}
	n := t.sent[h]
	t.sent[h] = n + 1
	t.smu.Unlock()
	return mix64(h^uint64(n)*0x9E3779B97F4A7C15) | 1
}

// sentMax bounds the sendings a transport remembers for drop keys; the
// count starts again when it is reached.
const sentMax = 1 << 16

// mix64 is splitmix64's finalizer.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// reportLoss tells the requester at once that the fabric lost the MAD
// of fl, its request or the answer to it, as the kernel reports a request
// whose timeout ran out (umad status ETIMEDOUT; Packet.TimedOut). tid is
// the MAD's TID as the fabric sees it. Under the fabric's read lock.
func (fl *flight) reportLoss(tid uint64, isResp bool) {
	to, f := fl.t, fl.t.f
	if isResp {
		// The answer of a request of the transport at its destination
		// LID, whose kernel bits are the TID's upper half.
		dlid := fl.p.Addr.LID
		if int(dlid) >= len(f.lids) || f.lids[dlid] == nil {
			return
		}
		if to = f.lids[dlid].Node.transportByHiTID(uint32(tid >> 32)); to == nil {
			return
		}
	}
	r := to.packet()
	*r = ibmad.Packet{MAD: fl.p.MAD, TimedOut: true}
	r.MAD.SetTID(tid)
	to.enqueue(r)
}
