package ibmad_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
)

// scriptedSA answers a GetTable with RMPP DATA segments of data, segment
// 1 alone and then up to each ACK's NewWindowLast, as a kernel RMPP
// sender does; its knobs break the stream on purpose.
type scriptedSA struct {
	data    []byte
	recSize int
	// stopAfter > 0: segments after it are never sent.
	stopAfter uint32
	// edit, if set, may change segment i before it goes out; false drops it.
	edit func(i uint32, m *ibmad.MAD) bool
	// status, if set, answers the request with it in one MAD.
	status ibmad.Status

	mu   sync.Mutex
	sent uint32
	acks []uint32
}

func (s *scriptedSA) n() uint32 {
	n := uint32((len(s.data) + ibmad.SASegData - 1) / ibmad.SASegData)
	return max(n, 1)
}

func (s *scriptedSA) segment(req *ibmad.MAD, i uint32) *ibmad.Packet {
	p := &ibmad.Packet{Addr: ibmad.GSIAddress(1, 0), MAD: *req}
	m := &p.MAD
	m.SetMethod(ibmad.MethodGetTableResp)
	n := s.n()
	pad := n*ibmad.SASegData - uint32(len(s.data))
	flags := uint8(ibmad.RMPPFlagActive)
	var paylen uint32
	if i == 1 {
		flags |= ibmad.RMPPFlagFirst
		paylen = n*ibmad.RMPPSegPayload - pad
	}
	if i == n {
		flags |= ibmad.RMPPFlagLast
		paylen = ibmad.RMPPSegPayload - pad
	}
	m[24], m[25], m[26], m[27] = 1, ibmad.RMPPTypeData, 0x1F<<3|flags, 0
	binary.BigEndian.PutUint32(m[28:], i)
	binary.BigEndian.PutUint32(m[32:], paylen)
	binary.BigEndian.PutUint16(m[44:], uint16(s.recSize/8))
	clear(m[ibmad.SADataOffset:])
	off := int(i-1) * ibmad.SASegData
	copy(m[ibmad.SADataOffset:], s.data[off:min(off+ibmad.SASegData, len(s.data))])
	if s.edit != nil && !s.edit(i, m) {
		return nil
	}
	return p
}

func (s *scriptedSA) answer(sent *ibmad.Packet) []*ibmad.Packet {
	m := sent.MAD
	if m.MgmtClass() != ibmad.ClassSubnAdm || m.Method() != ibmad.MethodGetTable {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var from, to uint32
	switch {
	case m[25] == ibmad.RMPPTypeAck && m[26]&ibmad.RMPPFlagActive != 0:
		seg, win := binary.BigEndian.Uint32(m[28:]), binary.BigEndian.Uint32(m[32:])
		s.acks = append(s.acks, seg)
		from, to = seg+1, min(win, s.n())
	case s.status != 0:
		r := *sent
		r.MAD.SetMethod(ibmad.MethodGetTableResp)
		r.MAD.SetStatus(s.status)
		return []*ibmad.Packet{&r}
	default:
		from, to = 1, 1
	}
	var out []*ibmad.Packet
	for i := from; i <= to; i++ {
		if s.stopAfter > 0 && i > s.stopAfter {
			break
		}
		if p := s.segment(&m, i); p != nil {
			out = append(out, p)
		}
		s.sent = max(s.sent, i)
	}
	return out
}

func records(n, size int) []byte {
	b := make([]byte, n*size)
	for i := range b {
		b[i] = byte(i*7 + i/size)
	}
	return b
}

func tableReq() *ibmad.Request {
	req := &ibmad.Request{Addr: ibmad.GSIAddress(1, 0), Timeout: 100 * time.Millisecond, Retries: 2}
	q := ibmad.NewSAGet(ibmad.AttrNodeRecord, 0)
	q.Method = ibmad.MethodGetTable
	_ = q.MarshalTo(req.MAD[:])
	return req
}

func getTable(t *testing.T, sa *scriptedSA, tr ibmad.TableRequest) (*ibmad.Table, time.Duration, error) {
	t.Helper()
	e := ibmad.NewEngine(madtest.New(sa.answer), ibmad.Options{})
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	tab, err := e.GetTable(ctx, tableReq(), tr)
	if ctx.Err() != nil {
		t.Fatalf("GetTable hung until the test's deadline: %v", err)
	}
	return tab, time.Since(start), err
}

func TestGetTableReassemblesAWindowedStream(t *testing.T) {
	for _, n := range []int{0, 1, 2, 17, 300} {
		sa := &scriptedSA{data: records(n, 112), recSize: 112}
		tab, _, err := getTable(t, sa, ibmad.TableRequest{Window: 4})
		if err != nil {
			t.Fatalf("%d records: %v", n, err)
		}
		if tab.Len() != n || !bytes.Equal(tab.Data, sa.data) || tab.RecordSize != 112 {
			t.Fatalf("%d records: got %d of %d bytes", n, tab.Len(), tab.RecordSize)
		}
		if n > 0 && tab.Segments != int(sa.n()) {
			t.Errorf("%d records: %d segments, sent %d", n, tab.Segments, sa.n())
		}
		// ACKs at window ends (1, 5, 9, ...) and the last segment.
		if want := 1 + int(sa.n()-1)/4; n == 300 && (len(sa.acks) < want || sa.acks[len(sa.acks)-1] != sa.n()) {
			t.Errorf("ACKs %v for %d segments", sa.acks, sa.n())
		}
	}
}

func TestGetTableSAErrorStatus(t *testing.T) {
	sa := &scriptedSA{status: ibmad.Status(uint16(ibmad.SAStatusReqInvalid) << 8)}
	_, _, err := getTable(t, sa, ibmad.TableRequest{})
	var se *ibmad.StatusError
	if !errors.As(err, &se) || se.Status.ClassSpecific() != ibmad.SAStatusReqInvalid {
		t.Fatalf("err %v, want the SA's ReqInvalid status", err)
	}
}

// TestGetTableStreamStopsHalfway: segments 4.. never come; the receiver
// prompts Retries times and gives up within the timeouts, not the
// context's deadline.
func TestGetTableStreamStopsHalfway(t *testing.T) {
	sa := &scriptedSA{data: records(20, 112), recSize: 112, stopAfter: 3}
	tab, took, err := getTable(t, sa, ibmad.TableRequest{Window: 2})
	if tab != nil || !errors.Is(err, ibmad.ErrRMPP) || !errors.Is(err, ibmad.ErrTimeout) {
		t.Fatalf("table %v err %v, want ErrRMPP and ErrTimeout", tab, err)
	}
	if took > 5*time.Second {
		t.Errorf("gave up after %v", took)
	}
	t.Logf("%v after %v", err, took)
}

// TestGetTableRecoversLostSegments: a segment lost once is sent again
// after the receiver's prompt and the table completes.
func TestGetTableRecoversLostSegments(t *testing.T) {
	lost := map[uint32]bool{}
	sa := &scriptedSA{data: records(30, 72), recSize: 72}
	sa.edit = func(i uint32, _ *ibmad.MAD) bool {
		if i == 3 && !lost[i] {
			lost[i] = true
			return false
		}
		return true
	}
	tab, _, err := getTable(t, sa, ibmad.TableRequest{Window: 8})
	if err != nil || !bytes.Equal(tab.Data, sa.data) {
		t.Fatalf("err %v", err)
	}
}

func TestGetTableMalformedStreams(t *testing.T) {
	for name, edit := range map[string]func(i uint32, m *ibmad.MAD) bool{
		"segment number 0": func(i uint32, m *ibmad.MAD) bool {
			binary.BigEndian.PutUint32(m[28:], 0)
			return true
		},
		"first segment without First": func(i uint32, m *ibmad.MAD) bool {
			m[26] &^= ibmad.RMPPFlagFirst
			return true
		},
		"First flag on segment 2": func(i uint32, m *ibmad.MAD) bool {
			if i == 2 {
				m[26] |= ibmad.RMPPFlagFirst
			}
			return true
		},
		"segment beyond the announced count": func(i uint32, m *ibmad.MAD) bool {
			if i == 2 {
				binary.BigEndian.PutUint32(m[28:], 1000)
			}
			return true
		},
		"Last flag too early": func(i uint32, m *ibmad.MAD) bool {
			if i == 2 {
				m[26] |= ibmad.RMPPFlagLast
				binary.BigEndian.PutUint32(m[32:], 100)
			}
			return true
		},
		"last segment without Last": func(i uint32, m *ibmad.MAD) bool {
			m[26] &^= ibmad.RMPPFlagLast
			return true
		},
		"last PayloadLength too large": func(i uint32, m *ibmad.MAD) bool {
			if m[26]&ibmad.RMPPFlagLast != 0 {
				binary.BigEndian.PutUint32(m[32:], 5000)
			}
			return true
		},
		"ABORT from the sender": func(i uint32, m *ibmad.MAD) bool {
			if i == 2 {
				m[25], m[27] = ibmad.RMPPTypeAbort, 118
			}
			return true
		},
		"ACK type from the sender": func(i uint32, m *ibmad.MAD) bool {
			if i == 2 {
				m[25] = ibmad.RMPPTypeAck
			}
			return true
		},
		"Active flag dropped mid-stream": func(i uint32, m *ibmad.MAD) bool {
			if i == 2 {
				m[26] = 0
			}
			return true
		},
		"announces more than the limit": func(i uint32, m *ibmad.MAD) bool {
			if i == 1 {
				binary.BigEndian.PutUint32(m[32:], 0xFFFFFFFF)
			}
			return true
		},
	} {
		t.Run(name, func(t *testing.T) {
			sa := &scriptedSA{data: records(5, 112), recSize: 112, edit: edit}
			tab, took, err := getTable(t, sa, ibmad.TableRequest{MaxBytes: 1 << 20})
			if !errors.Is(err, ibmad.ErrRMPP) || tab != nil {
				t.Fatalf("table %v, err %v; want ErrRMPP", tab, err)
			}
			if errors.Is(err, ibmad.ErrTimeout) || took > 5*time.Second {
				t.Errorf("a malformed stream should fail at once, not time out: %v after %v", err, took)
			}
		})
	}
}

// TestGetTableOneMADAnswers: a message the sender never segmented (RMPP
// type 0, as OpenSM's reaches us through ibsim) is whole when the
// transport knows it was shorter than a MAD, and truncated otherwise; a
// message the kernel reassembled comes whole with its tail.
func TestGetTableOneMADAnswers(t *testing.T) {
	data := records(5, 112)
	for _, c := range []struct {
		name    string
		records int
		length  int
		tail    []byte
		wantErr error
	}{
		{"type 0, 1 record, length known", 1, ibmad.SADataOffset + 112, nil, nil},
		{"type 0, cut at 256", 1, ibmad.MADSize, nil, ibmad.ErrTableTruncated},
		{"type 0, length unknown", 1, 0, nil, ibmad.ErrTableTruncated},
		{"kernel reassembled", 5, ibmad.SADataOffset + 5*112, data[200:], nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			sa := func(sent *ibmad.Packet) []*ibmad.Packet {
				if sent.MAD.Method() != ibmad.MethodGetTable || sent.MAD[25] != 0 {
					return nil
				}
				r := &ibmad.Packet{Addr: sent.Addr, MAD: sent.MAD, Len: c.length, RMPPTail: c.tail}
				r.MAD.SetMethod(ibmad.MethodGetTableResp)
				r.MAD[26] = ibmad.RMPPFlagActive
				if c.tail != nil {
					r.MAD[25], r.MAD[26] = ibmad.RMPPTypeData, ibmad.RMPPFlagActive|ibmad.RMPPFlagFirst
					binary.BigEndian.PutUint32(r.MAD[28:], 1)
				}
				binary.BigEndian.PutUint16(r.MAD[44:], 14)
				copy(r.MAD[ibmad.SADataOffset:], data)
				return []*ibmad.Packet{r}
			}
			e := ibmad.NewEngine(madtest.New(sa), ibmad.Options{})
			defer e.Close()
			tab, err := e.GetTable(context.Background(), tableReq(), ibmad.TableRequest{})
			if !errors.Is(err, c.wantErr) && err != c.wantErr {
				t.Fatalf("err %v, want %v", err, c.wantErr)
			}
			if tab == nil || tab.Len() != c.records || !bytes.Equal(tab.Data, data[:c.records*112]) {
				t.Fatalf("table %+v", tab)
			}
		})
	}
}

func TestGetTableEngineClosed(t *testing.T) {
	e := ibmad.NewEngine(madtest.New(nil), ibmad.Options{})
	done := make(chan error, 1)
	go func() {
		_, err := e.GetTable(context.Background(), tableReq(), ibmad.TableRequest{})
		done <- err
	}()
	e.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ibmad.ErrClosed) && !errors.Is(err, ibmad.ErrTimeout) {
			t.Fatalf("err %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("GetTable did not return after Close")
	}
}

// kernelRMPP is a transport whose kernel does RMPP (umad).
type kernelRMPP struct{ *madtest.Transport }

func (kernelRMPP) ReassemblesRMPP() bool { return true }

// TestGetTableSendsNoACKWhenTheKernelDoesRMPP: over a transport that
// reassembles (umad with RMPP version 1), the kernel has ACKed already;
// the engine must not send an ACK of its own.
func TestGetTableSendsNoACKWhenTheKernelDoesRMPP(t *testing.T) {
	sa := &scriptedSA{data: records(1, 112), recSize: 112}
	tr := madtest.New(sa.answer)
	e := ibmad.NewEngine(kernelRMPP{tr}, ibmad.Options{})
	defer e.Close()
	tab, err := e.GetTable(context.Background(), tableReq(), ibmad.TableRequest{})
	if err != nil || tab.Len() != 1 {
		t.Fatalf("table %v, err %v", tab, err)
	}
	sa.mu.Lock()
	defer sa.mu.Unlock()
	if len(sa.acks) != 0 || tr.Sent.Load() != 1 {
		t.Fatalf("sent %d MADs, ACKs %v; want the request only", tr.Sent.Load(), sa.acks)
	}
}

// TestGetTableRetriesASendRefusedForNow: a GetTable whose send the kernel
// refuses for now (EAGAIN) is sent again within its retries, as Do's
// requests are (docs/protocol.md, "Send errors"), not failed as refused.
func TestGetTableRetriesASendRefusedForNow(t *testing.T) {
	sa := &scriptedSA{data: records(3, 112), recSize: 112}
	tr := madtest.New(sa.answer)
	e := ibmad.NewEngine(tr, ibmad.Options{})
	defer e.Close()
	again := error(syscall.EAGAIN)
	tr.SendErr.Store(&again)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type result struct {
		tab *ibmad.Table
		err error
	}
	done := make(chan result, 1)
	go func() {
		tab, err := e.GetTable(ctx, tableReq(), ibmad.TableRequest{})
		done <- result{tab, err}
	}()
	for len(e.Stats().Classes) == 0 || e.Stats().Classes[0].SendErrors == 0 {
		time.Sleep(time.Millisecond)
	}
	tr.SendErr.Store(nil)
	r := <-done
	if r.err != nil {
		t.Fatalf("a GetTable whose send was refused for now, then accepted: %v", r.err)
	}
	if r.tab.Len() != 3 {
		t.Fatalf("%d records, want 3", r.tab.Len())
	}
	if e.Err() != nil {
		t.Fatalf("engine lost: %v", e.Err())
	}
}
