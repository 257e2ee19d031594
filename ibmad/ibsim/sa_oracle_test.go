package ibsim_test

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
)

// parseSADump reads saquery's "\t\tkey.....value" PathRecord dump.
func parseSADump(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		i := strings.Index(line, "..")
		if i <= 0 {
			continue
		}
		m[line[:i]] = strings.TrimLeft(line[i:], ".")
	}
	return m
}

// TestOracleSAPathRecord: a PathRecord Get by DGID/SGID through our
// transport, answered by a running OpenSM, returns what saquery returns.
func TestOracleSAPathRecord(t *testing.T) {
	ibsimtest.Require(t)
	for _, tc := range []struct {
		file  string
		nodes []string
		every int
	}{
		{"two-switch.net", []string{"host1", "host4"}, 1},
		{"chain-5.net", []string{"hostA", "hostB"}, 1},
		{"fattree-128.net", []string{"H0-0", "H9-3"}, 9},
	} {
		t.Run(tc.file, func(t *testing.T) {
			fab := ibsimtest.Start(t, filepath.Join(topoDir, tc.file), ibsimtest.Options{KeepSM: true})
			for _, at := range tc.nodes {
				tr := fab.Dial(at, false)
				e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 2 * time.Second})
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				sub, err := madtest.Walk(ctx, e)
				if err != nil {
					t.Fatal(err)
				}
				local, err := tr.Port()
				if err != nil || local.SMLID == 0 {
					t.Fatalf("port %+v: %v", local, err)
				}
				compared := 0
				for i, n := range sub.Nodes {
					if n.Info.NodeType != ibmad.NodeTypeCA || i%tc.every != 0 {
						continue
					}
					dgid := ibmad.MakeGID(local.GIDPrefix, n.Info.PortGUID)
					q := ibmad.NewSAGet(ibmad.AttrPathRecord, ibmad.PRCompDGID|ibmad.PRCompSGID)
					pr := ibmad.PathRecord{DGID: dgid, SGID: local.GID()}
					_ = pr.MarshalTo(q.Data[:])
					req := &ibmad.Request{Addr: ibmad.GSIAddress(local.SMLID, local.SMSL)}
					_ = q.MarshalTo(req.MAD[:])
					var resp ibmad.Response
					if err := e.Do(ctx, req, &resp); err != nil {
						t.Fatalf("PathRecord to %s: %v", n.Desc, err)
					}
					if st := resp.MAD.Status(); st != 0 {
						t.Fatalf("PathRecord to %s: status %s", n.Desc, st)
					}
					var got ibmad.PathRecord
					_ = got.UnmarshalBinary(resp.MAD.SAData())
					out, err := fab.Tool(at, "saquery", "-p", "--sgid-to-dgid", short(local.GID())+"-"+short(dgid))
					if err != nil {
						t.Fatal(err)
					}
					want := parseSADump(out)
					for k, v := range map[string]uint64{"dlid": uint64(got.DLID), "slid": uint64(got.SLID),
						"pkey": uint64(got.PKey), "sl": uint64(got.SL),
						"mtu": uint64(got.MTUSelector)<<6 | uint64(got.MTU), "rate": uint64(got.RateSelector)<<6 | uint64(got.Rate)} {
						w, err := strconv.ParseUint(want[k], 0, 64)
						if err != nil || w != v {
							t.Errorf("%s -> %s: %s: saquery %q, ours %d", at, n.Desc, k, want[k], v)
						}
					}
					if short(got.DGID) != want["dgid"] || short(got.SGID) != want["sgid"] {
						t.Errorf("%s -> %s: GIDs %s %s, saquery %s %s", at, n.Desc, short(got.DGID), short(got.SGID), want["dgid"], want["sgid"])
					}
					compared++
				}
				cancel()
				e.Close()
				if compared == 0 {
					t.Fatal("no PathRecord compared")
				}
				t.Logf("from %s: %d PathRecords equal to saquery's", at, compared)
			}
		})
	}
}

func short(g ibmad.GID) string { return fmt.Sprint(netip.AddrFrom16(g)) }
