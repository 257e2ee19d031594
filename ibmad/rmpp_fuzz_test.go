package ibmad

import (
	"encoding/binary"
	"errors"
	"testing"
)

// FuzzRMPPReassembly feeds arbitrary response MADs to the GetTable
// receiver: it never panics, never holds more than its limit, and a table
// it calls complete is whole records. Input: a window byte, then chunks
// of [flags byte | 36 header bytes] patched over a DATA segment template.
func FuzzRMPPReassembly(f *testing.F) {
	seg := func(i, paylen uint32, flags byte) []byte {
		b := make([]byte, 37)
		b[25], b[26], b[27] = 1, RMPPTypeData, RMPPFlagActive|flags // version, type, flags at MAD 24-26
		binary.BigEndian.PutUint32(b[29:], i)
		binary.BigEndian.PutUint32(b[33:], paylen)
		return b
	}
	good := append([]byte{2}, seg(1, 3*220-50, RMPPFlagFirst)...)
	good = append(good, seg(2, 0, 0)...)
	good = append(good, seg(3, 170, RMPPFlagLast)...)
	f.Add(good)
	f.Add(append([]byte{1}, seg(1, 220, RMPPFlagFirst|RMPPFlagLast)...))
	f.Add(append([]byte{1}, seg(0, 0, 0)...))
	f.Add([]byte{0, 1, 2, 3})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		const limit = 4096
		r := newRMPPReceiver(uint32(in[0]%8), limit)
		in = in[1:]
		for len(in) >= 37 {
			chunk := in[:37]
			in = in[37:]
			var m MAD
			m[0], m[1], m[2], m[3] = 1, byte(ClassSubnAdm), 2, byte(MethodGetTableResp)
			binary.BigEndian.PutUint16(m[44:], uint16(chunk[0]%32)) // AttributeOffset
			copy(m[24:36], chunk[25:37])
			m[4] = chunk[4] & 0x3 // sometimes a status
			for i := SADataOffset; i < MADSize; i++ {
				m[i] = byte(i)
			}
			var ext []byte
			n := 0
			if chunk[1]&0x80 != 0 { // a transport-reassembled message
				ext = make([]byte, int(chunk[2])*3)
				n = MADSize + len(ext) - int(chunk[3]%200)
			} else if chunk[1]&0x40 != 0 {
				n = int(chunk[3]) + 1
			}
			_, done, err := r.feed(&m, ext, n)
			if len(r.table.Data) > limit+SASegData+MADSize+len(ext) {
				t.Fatalf("holds %d bytes, limit %d", len(r.table.Data), limit)
			}
			if err != nil && !errors.Is(err, ErrRMPP) && !errors.Is(err, ErrTableTruncated) {
				var se *StatusError
				if !errors.As(err, &se) {
					t.Fatalf("unexpected error kind: %v", err)
				}
			}
			if done && (err == nil || errors.Is(err, ErrTableTruncated)) {
				if rs := r.table.RecordSize; rs > 0 && len(r.table.Data)%rs != 0 {
					t.Fatalf("complete table of %d bytes, records of %d", len(r.table.Data), rs)
				}
				_ = r.table.Len()
				for i := 0; i < r.table.Len(); i++ {
					_ = r.table.Record(i)
				}
			}
			if done || err != nil {
				return
			}
		}
	})
}
