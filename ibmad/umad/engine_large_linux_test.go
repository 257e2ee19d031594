package umad

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// saDevice plays the kernel for an SA whose NodeRecord table reaches the
// transport reassembled (docs/protocol.md, "Receiving"): every GetTable
// written is answered by a message of records records of 112 bytes,
// first offered to a read too short for it (ENOSPC, the header with the
// full length), then whole; a Get is answered by one MAD.
type saDevice struct {
	mu      sync.Mutex
	cond    *sync.Cond
	records int
	writes  int      // requests written
	reads   [][]byte // messages to read, each with its umad header
	short   bool     // the next read of reads[0] fails with ENOSPC first
	closed  bool
}

func newSADevice(records int) *saDevice {
	d := &saDevice{records: records}
	d.cond = sync.NewCond(&d.mu)
	return d
}

func (d *saDevice) Write(b []byte) (int, error) {
	var h header
	h.unmarshal(b, hdrSize)
	var m ibmad.MAD
	copy(m[:], b[hdrSize:])
	size := ibmad.MADSize
	if m.Method() == ibmad.MethodGetTable {
		size = ibmad.SADataOffset + d.records*112
	}
	full := make([]byte, hdrSize+size)
	rh := header{length: uint32(len(full)), addr: ibmad.Address{LID: h.addr.LID, QPN: 1, QKey: ibmad.QP1QKey}}
	rh.marshal(full, hdrSize)
	copy(full[hdrSize:], m[:])
	r := (*ibmad.MAD)(full[hdrSize : hdrSize+ibmad.MADSize])
	r.SetMethod(m.Method() | 0x80)
	if m.Method() == ibmad.MethodGetTable {
		full[hdrSize+25], full[hdrSize+26] = ibmad.RMPPTypeData, ibmad.RMPPFlagActive|ibmad.RMPPFlagFirst|ibmad.RMPPFlagLast
		binary.BigEndian.PutUint32(full[hdrSize+28:], 1)
	}
	binary.BigEndian.PutUint16(full[hdrSize+44:], 14) // AttributeOffset: 112-byte records
	full[len(full)-1] = 0x5a
	d.mu.Lock()
	d.writes++
	d.reads = append(d.reads, full)
	d.short = size > ibmad.MADSize
	d.cond.Broadcast()
	d.mu.Unlock()
	return len(b), nil
}

func (d *saDevice) Read(b []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.reads) == 0 && !d.closed {
		d.cond.Wait()
	}
	if d.closed {
		return 0, os.ErrClosed
	}
	full := d.reads[0]
	if len(full) > len(b) {
		if !d.short {
			return 0, unix.EIO // the transport read with a short buffer twice
		}
		d.short = false
		copy(b, full[:hdrSize]) // the kernel copies the header and requeues
		return 0, unix.ENOSPC
	}
	d.reads = d.reads[1:]
	return copy(b, full), nil
}

func (d *saDevice) Ioctl(uintptr, unsafe.Pointer) error { return nil }

func (d *saDevice) Close() error {
	d.mu.Lock()
	d.closed = true
	d.cond.Broadcast()
	d.mu.Unlock()
	return nil
}

// saEngine is an engine over the umad transport on d, whose transport
// reads messages of at most maxTable bytes (0: the default bound).
func saEngine(t *testing.T, d *saDevice, maxTable int) *ibmad.Engine {
	t.Helper()
	tr := newTransport(Options{}, CA{Name: "fake0"}, Port{CA: "fake0", Num: 1})
	if maxTable > 0 {
		tr.maxTable = maxTable
	}
	if err := tr.attach(d); err != nil {
		t.Fatal(err)
	}
	// The timeout is far longer than an answer takes even on a loaded
	// machine: a retry here means the refusal did not reach its request.
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 15 * time.Second, Retries: 1})
	t.Cleanup(func() { e.Close() })
	return e
}

func nodeRecordTable() *ibmad.Request {
	req := &ibmad.Request{Addr: ibmad.GSIAddress(1, 0)}
	q := ibmad.NewSAGet(ibmad.AttrNodeRecord, 0)
	q.Method = ibmad.MethodGetTable
	_ = q.MarshalTo(req.MAD[:])
	return req
}

// TestUmadEngineReadsATableOverOneMiB: a NodeRecord table of 20,000
// records (2.2 MB, about 10,000 dual-port nodes) reaches GetTable whole
// through the umad transport and the engine; the device is not lost, and
// the next request is answered (issue 41).
func TestUmadEngineReadsATableOverOneMiB(t *testing.T) {
	const records = 20000
	d := newSADevice(records)
	e := saEngine(t, d, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tab, err := e.GetTable(ctx, nodeRecordTable(), ibmad.TableRequest{})
	if err != nil {
		t.Fatalf("a %d-record table: %v", records, err)
	}
	if tab.Len() != records || tab.Data[len(tab.Data)-1] != 0x5a {
		t.Fatalf("%d records, last byte %#x; want %d and 0x5a", tab.Len(), tab.Data[len(tab.Data)-1], records)
	}
	if err := e.Err(); err != nil {
		t.Fatalf("the device: %v", err)
	}
	req := nodeRecordTable()
	req.MAD.SetMethod(ibmad.MethodGet)
	var resp ibmad.Response
	if err := e.Do(ctx, req, &resp); err != nil {
		t.Fatalf("the next request: %v", err)
	}
}

// TestUmadEngineRefusesATableOverTheBound: an answer longer than any
// table the transport takes (ibmad.DefaultMaxTableBytes; 1 MiB here, so
// that the test does not move 64 MiB under the race detector) fails its
// own request at once, with an error that says so: not a timeout after
// the retries, not the device lost; the next request is answered (issue
// 41). With the default bound and a 2 s timeout, a CI machine under load
// took longer than the timeout to copy the 64 MiB answer, and the
// request was asked again.
func TestUmadEngineRefusesATableOverTheBound(t *testing.T) {
	const bound = 1 << 20
	records := bound/112 + 10
	d := newSADevice(records)
	e := saEngine(t, d, bound)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := e.GetTable(ctx, nodeRecordTable(), ibmad.TableRequest{})
	if err == nil || errors.Is(err, ibmad.ErrTimeout) || errors.Is(err, ibmad.ErrDeviceLost) || !strings.Contains(err.Error(), "over the") {
		t.Fatalf("%v; want the answer refused for its size", err)
	}
	d.mu.Lock()
	writes := d.writes
	d.mu.Unlock()
	if writes != 1 {
		t.Errorf("%d requests sent: want the first refused at once, not asked again after a timeout", writes)
	}
	if err := e.Err(); err != nil {
		t.Fatalf("the device: %v", err)
	}
	d.mu.Lock()
	d.records = 10
	d.mu.Unlock()
	if tab, err := e.GetTable(ctx, nodeRecordTable(), ibmad.TableRequest{}); err != nil || tab.Len() != 10 {
		t.Fatalf("the next table: %v", err)
	}
	if n := e.Stats().Drops[ibmad.DropTruncated]; n != 1 {
		t.Errorf("%d dropped as truncated, want 1", n)
	}
}
