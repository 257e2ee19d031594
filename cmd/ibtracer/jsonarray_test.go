package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestJSONArrayIsTheEncoders: writeJSONArray's bytes are those of
// encoding/json's Encoder with SetIndent("", "  ") over the same slice,
// for no item, one, and many of every kind a run prints (an error with
// characters JSON escapes, hops, a health, an empty health list).
func TestJSONArrayIsTheEncoders(t *testing.T) {
	var items []jsonWithHealth
	for i := range 37 {
		r := &trace.Result{Destination: trace.Destination{LID: uint16(i + 1), Name: fmt.Sprintf("h<%d>&\"x\"", i)},
			DLID: uint16(i + 1), Status: trace.StatusOK, MADs: i, Start: time.Unix(1_700_000_000, int64(i)),
			Duration: time.Duration(i) * time.Microsecond}
		if i%3 == 1 {
			r.Status, r.Reason, r.Err = trace.StatusUnreachable, trace.ReasonNoRoute, errors.New("no route to LID <7> & \u2028")
		}
		for h := range i % 5 {
			r.Hops = append(r.Hops, trace.Hop{Hop: h, NodeGUID: ibmad.GUID(0x1000 + h), NodeType: ibmad.NodeTypeSwitch,
				NodeDesc: fmt.Sprintf("sw %d \"quoted\"", h), LID: uint16(h + 1), OutPort: uint8(h + 2), RTT: time.Duration(h) * time.Millisecond})
		}
		j := jsonWithHealth{JSONResult: r.JSON()}
		if i%4 == 2 {
			j.Health = &linkhealth.PathHealth{}
		}
		items = append(items, j)
	}
	for _, n := range []int{0, 1, 2, len(items)} {
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(items[:n]); err != nil {
			t.Fatal(err)
		}
		if err := writeJSONArray(&got, n, func(i int) any { return items[i] }); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("%d items: writeJSONArray wrote\n%s\nthe Encoder\n%s", n, got.Bytes(), want.Bytes())
		}
	}
	// An item that cannot be marshalled fails the document, as it does the Encoder.
	var got bytes.Buffer
	if err := writeJSONArray(&got, 2, func(i int) any { return []any{i, func() {}} }); err == nil || got.Len() != 0 {
		t.Fatalf("err %v, wrote %q", err, got.Bytes())
	}
}
