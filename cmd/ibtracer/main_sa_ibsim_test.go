package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

func smpRequests(st ibmad.Stats) uint64 {
	var n uint64
	for _, c := range st.Classes {
		if c.Class == ibmad.ClassSubnDR || c.Class == ibmad.ClassSubnLID {
			n += c.Requests
		}
	}
	return n
}

// TestSAOnlyPathsEqualSMPAndIbtracert: on OpenSM's SA, --discovery=sa
// builds every CA LID's path from SA records alone. For two topologies
// and two sources each, the SA-mode path equals the SMP-mode walk's and
// stock ibtracert's, and the SA-mode engine sent no SMP at all.
func TestSAOnlyPathsEqualSMPAndIbtracert(t *testing.T) {
	ibsimtest.Require(t)
	for _, tc := range []struct {
		file    string
		sources []string
	}{
		{"fattree-mini.net", []string{"H0-0", "H1-2"}},
		{"fattree-128.net", []string{"H0-0", "H11-6"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			fab := ibsimtest.Start(t, filepath.Join(topoDir, tc.file), ibsimtest.Options{KeepSM: true, SMHost: true})
			lids := allLIDs(t, fab, tc.sources[0])
			total := 0
			for _, src := range tc.sources {
				ctx := context.Background()
				saEng := ibmad.NewEngine(fab.Dial(src, false), ibmad.Options{Timeout: 2 * time.Second})
				defer saEng.Close()
				smpEng := ibmad.NewEngine(fab.Dial(src, false), ibmad.Options{Timeout: 2 * time.Second})
				defer smpEng.Close()
				saTr := trace.New(saEng, trace.Options{Discovery: trace.DiscoverySA, Validate: trace.ValidateOff, Timeout: 2 * time.Second})
				smpTr := trace.New(smpEng, trace.Options{Discovery: trace.DiscoverySMP, Validate: trace.ValidateOff, Timeout: 2 * time.Second})
				me, err := saEng.Port()
				if err != nil {
					t.Fatal(err)
				}
				var cas []uint16
				for lid, desc := range lids {
					if strings.HasPrefix(desc, "H") && lid != me.LID {
						cas = append(cas, lid)
					}
				}
				var mu sync.Mutex
				compared, saMADs, smpMADs, saReqs := 0, 0, 0, 0
				each(len(cas), 4, func(i int) {
					lid := cas[i]
					sa := saTr.Trace(ctx, trace.Destination{LID: lid})
					smp := smpTr.Trace(ctx, trace.Destination{LID: lid})
					if sa.Status != trace.StatusOK || smp.Status != trace.StatusOK || sa.Discovery != trace.DiscoverySA {
						t.Errorf("LID %d: SA mode %s %v (%s), SMP mode %s %v", lid, sa.Status, sa.Err, sa.Discovery, smp.Status, smp.Err)
						return
					}
					if sa.Signature() != smp.Signature() {
						t.Errorf("LID %d: SA path %s, SMP path %s", lid, sa.Signature(), smp.Signature())
						return
					}
					if err := ibtracertDiff(fab, src, me.LID, lid, sa.JSON()); err != nil {
						t.Errorf("SA mode from %s to LID %d: %v", src, lid, err)
						return
					}
					mu.Lock()
					compared++
					saMADs += sa.MADs
					smpMADs += smp.MADs
					saReqs += sa.SARequests
					mu.Unlock()
				})
				if n := smpRequests(saEng.Stats()); n != 0 {
					t.Fatalf("from %s: the SA-mode engine sent %d SMPs", src, n)
				}
				if smpRequests(smpEng.Stats()) == 0 {
					t.Fatal("the SMP-mode engine sent no SMP: the counter proves nothing")
				}
				if compared != len(cas) || compared == 0 {
					t.Fatalf("from %s: %d of %d CA LIDs compared", src, compared, len(cas))
				}
				total += compared
				t.Logf("from %s: %d CA paths SA == SMP == ibtracert; per trace: SA mode %.1f MADs (%.1f SA record requests, records shared), SMP mode %.1f MADs; 0 SMPs in SA mode",
					src, compared, float64(saMADs)/float64(compared), float64(saReqs)/float64(compared), float64(smpMADs)/float64(compared))
				// Without sharing: one trace, every record asked.
				cold := trace.New(saEng, trace.Options{Discovery: trace.DiscoverySA, Validate: trace.ValidateOff, Timeout: 2 * time.Second})
				r := cold.Trace(ctx, trace.Destination{LID: cas[0]})
				t.Logf("from %s: a cold SA-mode trace of %d hops: %d SA requests", src, r.PathHops(), r.SARequests)
			}
			t.Logf("%s: %d paths compared", tc.file, total)
			if tc.file != "fattree-mini.net" {
				return
			}
			// Validation in SA mode: the expected ingress ports come from
			// OpenSM's records, and our agents confirm them.
			startAgents(t, fab, false, "H1-0", "H1-1")
			e := ibmad.NewEngine(fab.Dial(tc.sources[0], false), ibmad.Options{Timeout: 2 * time.Second})
			defer e.Close()
			tr := trace.New(e, trace.Options{Discovery: trace.DiscoverySA, Timeout: 2 * time.Second})
			for lid, desc := range lids {
				if desc != "H1-0" && desc != "H1-1" {
					continue
				}
				r := tr.Trace(context.Background(), trace.Destination{LID: lid})
				last := r.Hops[len(r.Hops)-1]
				if r.Status != trace.StatusOK || last.Agent != trace.AgentValidated || last.ActualInPort != last.ExpectedInPort {
					t.Fatalf("SA mode with validation to %s: %s %v, last hop %s (in %d, expected %d)", desc, r.Status, r.Err, last.Agent, last.ActualInPort, last.ExpectedInPort)
				}
			}
			if n := smpRequests(e.Stats()); n != 0 {
				t.Fatalf("SA mode with validation sent %d SMPs", n)
			}
		})
	}
}

// TestCLIDiscoverySA: the command's JSON says which discovery was used.
func TestCLIDiscoverySA(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "two-switch.net"), ibsimtest.Options{KeepSM: true, SMHost: true})
	lids := allLIDs(t, fab, "host1")
	var dst uint16
	for lid, d := range lids {
		if d == "host5" {
			dst = lid
		}
	}
	for _, mode := range []string{"sa", "smp", "auto"} {
		out, errOut, code := runCLI(t, fab, "host1", "--format=json", "--no-validate", "--discovery="+mode, "-l", strconv.Itoa(int(dst)))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", mode, code, errOut)
		}
		var rs []trace.JSONResult
		if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 1 {
			t.Fatalf("%s: %v %s", mode, err, out)
		}
		want := mode
		if mode == "auto" {
			want = "smp" // SMPs work here
		}
		if rs[0].Discovery != want || (mode == "sa") != (rs[0].SARequests > 0) {
			t.Fatalf("--discovery=%s: JSON discovery %q, %d SA requests", mode, rs[0].Discovery, rs[0].SARequests)
		}
	}
}

// TestSAOnlyAtLMC: with OpenSM at LMC 1 and 2, a switch's port-0 LID
// (LMC 0) is often not a multiple of 2^LMC, and OpenSM's LinkRecord
// matching masks every LID with the subnet's LMC (docs/protocol.md,
// "SA-only discovery"). On fattree-mini and on the issue's own
// reproduction, a 4x2x4 fat tree (4 leaves, 2 spines, 4 hosts a leaf),
// for every LID of every CA port (base .. base+2^LMC-1) the SA-mode path
// equals stock ibtracert's, and the SA-mode engine sent no SMP.
func TestSAOnlyAtLMC(t *testing.T) {
	ibsimtest.Require(t)
	for _, file := range []string{"fattree-mini.net", "fattree-4x2x4.net"} {
		for _, lmc := range []int{1, 2} {
			t.Run(strings.TrimSuffix(file, ".net")+"/lmc"+strconv.Itoa(lmc), func(t *testing.T) { saOnlyAtLMC(t, file, lmc) })
		}
	}
}

func saOnlyAtLMC(t *testing.T, file string, lmc int) {
	fab := ibsimtest.Start(t, filepath.Join(topoDir, file),
		ibsimtest.Options{KeepSM: true, SMHost: true, SMArgs: []string{"-l", strconv.Itoa(lmc)}})
	const src = "H0-0"
	lids := allLIDs(t, fab, src)
	e := ibmad.NewEngine(fab.Dial(src, false), ibmad.Options{Timeout: 2 * time.Second})
	defer e.Close()
	tr := trace.New(e, trace.Options{Discovery: trace.DiscoverySA, Validate: trace.ValidateOff, Timeout: 2 * time.Second})
	me, err := e.Port()
	if err != nil {
		t.Fatal(err)
	}
	var cas []uint16
	for lid, desc := range lids {
		if strings.HasPrefix(desc, "H") && lid != me.LID {
			for k := range 1 << lmc {
				cas = append(cas, lid+uint16(k))
			}
		}
	}
	var mu sync.Mutex
	unaligned := map[uint16]bool{} // switch LIDs on the paths not aligned to the LMC
	paths := map[string]bool{}     // distinct paths: the LIDs of a port take several
	compared := 0
	each(len(cas), 4, func(i int) {
		lid := cas[i]
		r := tr.Trace(context.Background(), trace.Destination{LID: lid})
		if r.Status != trace.StatusOK || r.Discovery != trace.DiscoverySA {
			t.Errorf("LMC %d, LID %d: SA mode %s %v (%s)", lmc, lid, r.Status, r.Err, r.Discovery)
			return
		}
		if last := r.Hops[len(r.Hops)-1]; int(last.LMC) != lmc {
			t.Errorf("LMC %d, LID %d: the destination port has LMC %d", lmc, lid, last.LMC)
			return
		}
		if err := ibtracertDiff(fab, src, me.LID, lid, r.JSON()); err != nil {
			t.Errorf("LMC %d, SA mode from %s to LID %d: %v", lmc, src, lid, err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, h := range r.Hops {
			if h.NodeType == ibmad.NodeTypeSwitch && h.LID%(1<<lmc) != 0 {
				unaligned[h.LID] = true
			}
		}
		paths[r.Signature()] = true
		compared++
	})
	if n := smpRequests(e.Stats()); n != 0 {
		t.Errorf("LMC %d: the SA-mode engine sent %d SMPs", lmc, n)
	}
	if compared != len(cas) || compared == 0 {
		t.Fatalf("LMC %d: %d of %d CA LIDs' paths equal ibtracert's", lmc, compared, len(cas))
	}
	if len(unaligned) == 0 {
		t.Fatalf("LMC %d: no traced path crosses a switch whose LID is not LMC-aligned: the test proves nothing", lmc)
	}
	t.Logf("%s LMC %d: %d CA LIDs' paths (%d distinct) SA == ibtracert, through unaligned switch LIDs %v; SA requests %v; 0 SMPs",
		file, lmc, compared, len(paths), unaligned, tr.SARequests())
}
