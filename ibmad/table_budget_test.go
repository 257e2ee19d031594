package ibmad_test

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
)

// A GetTable spends the MAD budget like any request: under mad_rate 1/s
// (burst 1) on a clock that does not move, the second table waits for a
// token until its context ends.
func TestGetTableSpendsTheBudget(t *testing.T) {
	data := records(1, 112)
	sa := func(sent *ibmad.Packet) []*ibmad.Packet {
		if sent.MAD.Method() != ibmad.MethodGetTable || sent.MAD[25] != 0 {
			return nil
		}
		r := &ibmad.Packet{Addr: sent.Addr, MAD: sent.MAD, Len: ibmad.SADataOffset + 112}
		r.MAD.SetMethod(ibmad.MethodGetTableResp)
		r.MAD[26] = ibmad.RMPPFlagActive
		binary.BigEndian.PutUint16(r.MAD[44:], 14)
		copy(r.MAD[ibmad.SADataOffset:], data)
		return []*ibmad.Packet{r}
	}
	e := ibmad.NewEngine(madtest.New(sa), ibmad.Options{})
	defer e.Close()
	e.SetBudget(ibmad.Budget{Rate: 1, Clock: fakeclock.New(time.Unix(1800000000, 0))})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := e.GetTable(ctx, tableReq(), ibmad.TableRequest{}); err != nil {
		t.Fatalf("first table: %v", err)
	}
	short, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	_, err := e.GetTable(short, tableReq(), ibmad.TableRequest{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second table under a spent budget: %v, want it to wait for a token until its context ends", err)
	}
	if s := e.BudgetStats(); s.Waits != 1 || s.Expired != 1 {
		t.Fatalf("budget stats %+v, want 1 wait, 1 expired", s)
	}
}
