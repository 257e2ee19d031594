package ibmad_test

import (
	"context"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
)

// TestGetTableCountsItsACKs: the engine's ClassStats.ACKs is the number
// of RMPP ACKs the SA received (the scripted SA's own count), prompts
// after a lost segment included, and Requests plus ACKs is every MAD the
// transport was sent; none over a transport whose kernel does RMPP.
func TestGetTableCountsItsACKs(t *testing.T) {
	loseOnce := func() func(uint32, *ibmad.MAD) bool {
		lost := false
		return func(i uint32, _ *ibmad.MAD) bool {
			if i == 3 && !lost {
				lost = true
				return false
			}
			return true
		}
	}
	for _, tc := range []struct {
		name   string
		sa     *scriptedSA
		window uint32
		kernel bool
	}{
		{"windowed", &scriptedSA{data: records(300, 112), recSize: 112}, 4, false},
		{"a segment lost once", &scriptedSA{data: records(30, 72), recSize: 72, edit: loseOnce()}, 8, false},
		{"one segment", &scriptedSA{data: records(1, 112), recSize: 112}, 4, false},
		// The scripted SA sends past segment 1 only when ACKed: one segment.
		{"the kernel does RMPP", &scriptedSA{data: records(1, 112), recSize: 112}, 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := madtest.New(tc.sa.answer)
			var via ibmad.Transport = tr
			if tc.kernel {
				via = kernelRMPP{tr}
			}
			e := ibmad.NewEngine(via, ibmad.Options{})
			defer e.Close()
			if _, err := e.GetTable(context.Background(), tableReq(), ibmad.TableRequest{Window: tc.window}); err != nil {
				t.Fatal(err)
			}
			var acks, requests uint64
			for _, c := range e.Stats().Classes {
				acks += c.ACKs
				requests += c.Requests
			}
			tc.sa.mu.Lock()
			got := len(tc.sa.acks)
			tc.sa.mu.Unlock()
			if acks != uint64(got) || requests+acks != tr.Sent.Load() {
				t.Fatalf("Stats: %d requests, %d ACKs; the SA got %d ACKs, the transport was sent %d MADs", requests, acks, got, tr.Sent.Load())
			}
			if tc.kernel != (got == 0) {
				t.Fatalf("%d ACKs sent (kernel RMPP %v)", got, tc.kernel)
			}
			t.Logf("%d requests, %d ACKs", requests, acks)
		})
	}
}
