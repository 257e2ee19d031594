package ibsim_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sa"
)

// fatTree is a two-level fat tree: leaves L<i>, spines S<j>, one link
// between every leaf and spine, hosts H<leaf>-<n> with one port each.
type fatTree struct{ leaves, spines, hosts int }

func (ft fatTree) cas() int { return ft.leaves * ft.hosts }

// write writes ft as an ibsim topology into dir, cabled as
// testdata/topologies/fattree-128.net is (a leaf's hosts on its first
// ports, then one port per spine).
func (ft fatTree) write(tb testing.TB, dir string) string {
	tb.Helper()
	var b strings.Builder
	for s := range ft.spines {
		fmt.Fprintf(&b, "Switch\t%d \"S%d\"\n", ft.leaves, s)
		for l := range ft.leaves {
			fmt.Fprintf(&b, "[%d]\t\"L%d\"[%d]\n", l+1, l, ft.hosts+s+1)
		}
		b.WriteString("\n")
	}
	for l := range ft.leaves {
		fmt.Fprintf(&b, "Switch\t%d \"L%d\"\n", ft.hosts+ft.spines, l)
		for h := range ft.hosts {
			fmt.Fprintf(&b, "[%d]\t\"H%d-%d\"[1]\n", h+1, l, h)
		}
		for s := range ft.spines {
			fmt.Fprintf(&b, "[%d]\t\"S%d\"[%d]\n", ft.hosts+s+1, s, l+1)
		}
		b.WriteString("\n")
	}
	for l := range ft.leaves {
		for h := range ft.hosts {
			fmt.Fprintf(&b, "Hca\t1\t\"H%d-%d\"\n[1]\t\"L%d\"[%d]\n\n", l, h, l, h+1)
		}
	}
	p := filepath.Join(dir, fmt.Sprintf("fattree-%dx%dx%d.net", ft.leaves, ft.spines, ft.hosts))
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkOpenSMCPUPerSAQuery measures what one SA query of each kind
// the exporter sends costs a real OpenSM, in CPU time of OpenSM's
// process (every thread, from /proc/PID/task/*/schedstat; the coarser
// utime+stime of /proc/PID/stat as a check): the figures behind the
// fleet's SA load in docs/architecture.md ("Load on one switch"). Our
// engine sends the queries one at a time from H0-0 to OpenSM on its own
// host, on fat trees of 128, 512 and 1,024 CA ports, so that the cost's growth
// with the fabric shows. OpenSM's sweeps are off (-s 0) after the first,
// and its CPU over an idle second is subtracted.
//
// The NodeRecord GetTable is cut to its first MAD on ibsim
// (docs/protocol.md, "SA tables"): OpenSM still builds the whole table
// and hands it to umad_send in one write, so its own CPU is counted;
// what is missing is the segmentation, which the kernel's MAD layer does
// on hardware (kernel time, not OpenSM's).
//
// Run with, for example:
//
//	go test -run '^$' -bench OpenSMCPUPerSAQuery -benchtime 2000x ./ibmad/ibsim/
func BenchmarkOpenSMCPUPerSAQuery(b *testing.B) {
	for _, ft := range []fatTree{{16, 8, 8}, {32, 8, 16}, {64, 16, 16}} {
		b.Run(fmt.Sprintf("ca=%d", ft.cas()), func(b *testing.B) { benchSACost(b, ft) })
	}
}

func benchSACost(b *testing.B, ft fatTree) {
	fab := ibsimtest.Start(b, ft.write(b, b.TempDir()), ibsimtest.Options{KeepSM: true, SMHost: true,
		SMArgs: []string{"-s", "0"}, Lifetime: 30 * time.Minute})
	tr := fab.Dial("H0-0", false)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 2 * time.Second})
	b.Cleanup(func() { e.Close() })
	local, err := tr.Port()
	if err != nil || local.SMLID == 0 {
		b.Fatalf("port %+v: %v", local, err)
	}
	sm := sa.Address(local)
	ctx := context.Background()
	nodes := nodesByLID(b, ctx, e, sm)
	var lids []uint16
	var cas []ibmad.NodeRecord
	for _, n := range nodes {
		lids = append(lids, n.LID)
		if n.NodeInfo.NodeType == ibmad.NodeTypeCA {
			cas = append(cas, n)
		}
	}
	if want := ft.cas() + 1 + ft.leaves + ft.spines; len(nodes) != want {
		b.Fatalf("%d nodes answer a NodeRecord Get by LID, the fabric has %d", len(nodes), want)
	}
	idle := idleSMCPU(b, fab)
	truncated := 0
	kinds := []struct {
		name string
		do   func(i int) error
	}{
		{"NodeRecordGetByLID", func(i int) error {
			_, err := sa.NodeRecordOf(ctx, e, sm, lids[i%len(lids)])
			return err
		}},
		{"PortInfoRecordGetByLID", func(i int) error {
			_, err := sa.PortInfoRecord(ctx, e, sm, cas[i%len(cas)].LID, 1)
			return err
		}},
		{"PathRecordGet", func(i int) error {
			pr := ibmad.PathRecord{DGID: ibmad.MakeGID(local.GIDPrefix, cas[i%len(cas)].NodeInfo.PortGUID), SGID: local.GID()}
			tmpl, _ := pr.MarshalBinary()
			_, err := sa.Get(ctx, e, sm, ibmad.AttrPathRecord, ibmad.PRCompDGID|ibmad.PRCompSGID, tmpl)
			return err
		}},
		{"NodeRecordGetTable", func(int) error {
			nrs, err := sa.NodeRecords(ctx, e, sm)
			if errors.Is(err, ibmad.ErrTableTruncated) && len(nrs) > 0 {
				truncated++
				return nil
			}
			if err == nil && len(nrs) != len(nodes) {
				return fmt.Errorf("a whole table of %d NodeRecords, the SA has %d", len(nrs), len(nodes))
			}
			return err
		}},
	}
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			pid := fab.SMPID()
			cpu0, err := fab.SMCPU()
			if err != nil {
				b.Fatal(err)
			}
			stat0, _ := ibsimtest.ProcessStatCPU(pid)
			sim0, _ := fab.IbsimCPU()
			truncated = 0
			start := time.Now()
			b.ResetTimer()
			for i := range b.N {
				if err := k.do(i); err != nil {
					b.Fatalf("%s #%d: %v", k.name, i, err)
				}
			}
			b.StopTimer()
			wall := time.Since(start)
			cpu1, _ := fab.SMCPU()
			stat1, _ := ibsimtest.ProcessStatCPU(pid)
			sim1, _ := fab.IbsimCPU()
			smCPU := cpu1 - cpu0 - time.Duration(float64(idle)*wall.Seconds())
			b.ReportMetric(float64(smCPU.Nanoseconds())/float64(b.N), "sm-ns/op")
			b.ReportMetric(float64((stat1-stat0).Nanoseconds())/float64(b.N), "sm-stat-ns/op")
			b.ReportMetric(float64((sim1-sim0).Nanoseconds())/float64(b.N), "ibsim-ns/op")
			if truncated > 0 {
				b.Logf("%d of %d NodeRecord tables of %d records came cut to their first MAD (ibsim)", truncated, b.N, len(nodes))
			}
		})
	}
}

// nodesByLID asks the SA for the NodeRecord of every LID from 1 up, one
// Get each, until 32 LIDs in a row have none.
func nodesByLID(b *testing.B, ctx context.Context, e *ibmad.Engine, sm ibmad.Address) []ibmad.NodeRecord {
	b.Helper()
	var nodes []ibmad.NodeRecord
	for lid, misses := uint16(1), 0; misses < 32 && lid < ibmad.PermissiveLID; lid++ {
		nr, err := sa.NodeRecordOf(ctx, e, sm, lid)
		switch {
		case sa.IsNoRecords(err):
			misses++
		case err != nil:
			b.Fatalf("NodeRecord of LID %d: %v", lid, err)
		default:
			misses = 0
			nodes = append(nodes, nr)
		}
	}
	return nodes
}

// idleSMCPU is OpenSM's CPU time per second of wall time over an idle
// second.
func idleSMCPU(b *testing.B, fab *ibsimtest.Fabric) time.Duration {
	b.Helper()
	c0, err := fab.SMCPU()
	if err != nil {
		b.Fatal(err)
	}
	time.Sleep(time.Second)
	c1, _ := fab.SMCPU()
	b.Logf("OpenSM idle: %v of CPU a second", c1-c0)
	return c1 - c0
}
