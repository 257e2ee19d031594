//go:build cgo && linux && ibcref

// The GRH of a destination's vendor MADs, from its PathRecord to the umad
// header, against an independent chain: OpenSM's PathRecord getters
// (internal/osmref) and libibumad's umad_set_addr / umad_set_grh
// (internal/cumadref).

package umad

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	c "github.com/ibtracer/ibtracer_exporter/ibmad/internal/cumadref"
	"github.com/ibtracer/ibtracer_exporter/ibmad/internal/osmref"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestPathRecordGRHMatchesLibibumad: for random PathRecords whose hop
// limit asks for a GRH, the header our transport writes for the vendor MAD
// the tracer sends to the destination (trace.Addressing.GMPAddress) holds
// the bytes libibumad's umad_set_addr and umad_set_grh write for the DLID,
// SL, DGID, hop limit, traffic class and flow label OpenSM's getters read
// from the same record bytes: offsets, byte order (the flow label
// big-endian at 52..55) and the 20-bit width of the flow label included.
func TestPathRecordGRHMatchesLibibumad(t *testing.T) {
	if n := osmref.PathRecordSize(); n != ibmad.PathRecordSize {
		t.Fatalf("sizeof(ib_path_rec_t) %d, ours %d", n, ibmad.PathRecordSize)
	}
	rng := rand.New(rand.NewPCG(20, 21))
	src := ibmad.PortAttributes{GIDPrefix: ibmad.DefaultGIDPrefix}
	grhs := 0
	for i := 0; i < 2000; i++ {
		rec := make([]byte, ibmad.PathRecordSize)
		for j := range rec {
			rec[j] = byte(rng.Uint32())
		}
		if i%3 == 0 { // our subnet: the hop limit alone decides
			copy(rec[8:16], []byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0})
		}
		var pr ibmad.PathRecord
		if err := pr.UnmarshalBinary(rec); err != nil {
			t.Fatal(err)
		}
		o := trace.Options{}
		a := o.AddressingFor(&pr, src)
		osm := osmref.ReadPathRecord(rec)
		remote := !bytes.Equal(osm.DGID[:8], []byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0})
		wantGRH := osm.HopLimit > 1 || remote
		if a.GRH != wantGRH || a.SL != osm.SL {
			t.Fatalf("record % x: GRH %v SL %d, want GRH %v (hop limit %d) SL %d", rec, a.GRH, a.SL, wantGRH, osm.HopLimit, osm.SL)
		}
		if !a.GRH {
			continue
		}
		grhs++
		hop := int(osm.HopLimit)
		if remote && hop <= 1 {
			hop = 0xFF // docs/protocol.md, "SL and GRH"
		}
		want := c.Fill(int(osm.DLID), ibmad.QP1, int(osm.SL), ibmad.QP1QKey, true, osm.DGID, hop,
			int(osm.TClass), osm.FlowLabel, 0, 0)
		got := make([]byte, hdrSize)
		h := header{addr: a.GMPAddress(pr.DLID, true)}
		h.marshal(got, hdrSize)
		if !bytes.Equal(got[20:56], want[20:56]) {
			t.Fatalf("record % x:\n ours      % x\n libibumad % x", rec, got[20:56], want[20:56])
		}
	}
	if grhs < 500 {
		t.Fatalf("only %d records with a GRH", grhs)
	}
}
