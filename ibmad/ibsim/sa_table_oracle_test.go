package ibsim_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sa"
)

// saRecords splits saquery's dump into records (each starting at a line
// that is exactly header) of "key" -> value, keys as saquery prints them
// ("lid", "Lid:", ...). LFT rows ("<lid>\t<port>") go in as "lft <lid>".
func saRecords(out, header string) []map[string]string {
	var recs []map[string]string
	var cur map[string]string
	for _, line := range strings.Split(out, "\n") {
		s := strings.TrimSpace(line)
		if s == header {
			cur = map[string]string{}
			recs = append(recs, cur)
			continue
		}
		if cur == nil || s == "" {
			continue
		}
		if i := strings.Index(s, ".."); i > 0 {
			cur[s[:i]] = strings.TrimLeft(s[i:], ".")
			continue
		}
		if f := strings.Fields(s); len(f) == 2 {
			if _, err := strconv.Atoi(f[0]); err == nil {
				cur["lft "+f[0]] = f[1]
			}
		}
	}
	return recs
}

func saNum(s string) uint64 {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 0, 64)
	if err != nil {
		return 1<<64 - 1
	}
	return v
}

var portStates = map[string]ibmad.PortState{"Down": 1, "Initialize": 2, "Init": 2, "Armed": 3, "Active": 4}
var physStates = map[string]ibmad.PhysState{"Sleep": 1, "Polling": 2, "Disabled": 3, "PortConfigurationTraining": 4, "LinkUp": 5, "LinkErrorRecovery": 6, "PhyTest": 7}

// Each record as the fields both sides decode, one string per record.
func nrKey(r ibmad.NodeRecord) string {
	return fmt.Sprintf("lid %d node %#016x port %#016x num %d ports %d desc %q", r.LID, uint64(r.NodeInfo.NodeGUID),
		uint64(r.NodeInfo.PortGUID), r.NodeInfo.LocalPortNum, r.NodeInfo.NumPorts, r.NodeDescription.String())
}

func nrKeyOf(m map[string]string) string {
	return fmt.Sprintf("lid %d node %#016x port %#016x num %d ports %d desc %q", saNum(m["lid"]), saNum(m["node_guid"]),
		saNum(m["port_guid"]), saNum(m["port_num"]), saNum(m["num_ports"]), m["NodeDescription"])
}

func pirKey(r ibmad.PortInfoRecord) string {
	p := r.PortInfo
	return fmt.Sprintf("lid %d port %d opt %d | lid %d sm %d local %d state %s phys %s lmc %d cap %#x prefix %#x",
		r.LID, r.PortNum, r.Options, p.LID, p.MasterSMLID, p.LocalPortNum, p.PortState, p.PortPhysState, p.LMC, p.CapabilityMask, p.GIDPrefix)
}

func pirKeyOf(m map[string]string) string {
	return fmt.Sprintf("lid %d port %d opt %d | lid %d sm %d local %d state %s phys %s lmc %d cap %#x prefix %#x",
		saNum(m["EndPortLid"]), saNum(m["PortNum"]), saNum(m["Options"]), saNum(m["Lid:"]), saNum(m["SMLid:"]), saNum(m["LocalPort:"]),
		portStates[m["LinkState:"]], physStates[m["PhysLinkState:"]], saNum(m["LMC:"]), saNum(m["CapMask:"]), saNum(m["GidPrefix:"]))
}

func lrKey(r ibmad.LinkRecord) string {
	return fmt.Sprintf("%d/%d -> %d/%d", r.FromLID, r.FromPort, r.ToLID, r.ToPort)
}

func lrKeyOf(m map[string]string) string {
	return fmt.Sprintf("%d/%d -> %d/%d", saNum(m["FromLID"]), saNum(m["FromPort"]), saNum(m["ToLID"]), saNum(m["ToPort"]))
}

func lftKey(r ibmad.LFTRecord) string {
	return fmt.Sprintf("lid %d block %d %v", r.LID, r.Block, r.LFT)
}

func lftKeyOf(m map[string]string) string {
	var b ibmad.LFTBlock
	blk := saNum(m["Block"])
	for i := range b {
		b[i] = uint8(saNum(m[fmt.Sprintf("lft %d", blk*64+uint64(i))]))
	}
	return fmt.Sprintf("lid %d block %d %v", saNum(m["LID"]), blk, b)
}

func swirKey(r ibmad.SwitchInfoRecord) string {
	s := r.SwitchInfo
	return fmt.Sprintf("lid %d lincap %d top %d mcap %d pcap %d", r.LID, s.LinearFDBCap, s.LinearFDBTop, s.MulticastFDBCap, s.PartitionEnforcementCap)
}

func swirKeyOf(m map[string]string) string {
	return fmt.Sprintf("lid %d lincap %d top %d mcap %d pcap %d", saNum(m["LID"]), saNum(m["LinearFDBCap"]), saNum(m["LinearFDBTop"]),
		saNum(m["MulticastFDBCap"]), saNum(m["PartitionEnforcementCap"]))
}

func keys[T any](rs []T, f func(T) string) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	sort.Strings(out)
	return out
}

func keysOf(ms []map[string]string, f func(map[string]string) string) []string {
	return keys(ms, f)
}

func sameSet(t *testing.T, what string, ours, theirs []string) {
	t.Helper()
	if strings.Join(ours, "\n") != strings.Join(theirs, "\n") {
		t.Errorf("%s: ours (%d)\n  %s\nsaquery (%d)\n  %s", what, len(ours), strings.Join(ours, "\n  "), len(theirs), strings.Join(theirs, "\n  "))
		return
	}
	if len(ours) == 0 {
		t.Errorf("%s: no records on either side", what)
	}
}

// sameOne checks a one-record Get (ours: the record's key, and the Get's
// error) against the records saquery prints for the same key (theirs):
// no records on both sides, or the same one.
func sameOne(t *testing.T, what, ours string, err error, theirs []string) {
	t.Helper()
	switch {
	case sa.IsNoRecords(err):
		if len(theirs) != 0 {
			t.Errorf("%s: no records, saquery has %v", what, theirs)
		}
	case err != nil:
		t.Fatalf("%s: %v", what, err)
	default:
		sameSet(t, what, []string{ours}, theirs)
	}
}

// TestOracleSATablesEqualSaquery: our GetTable of NodeRecord,
// PortInfoRecord, LinkRecord, LFTRecord and SwitchInfoRecord, answered by
// OpenSM on ibsim, returns the records stock saquery prints, field by
// field for the fields we decode: whole tables, and one key at a time
// for every LID and port. Through ibsim OpenSM's answers are cut to one
// MAD (docs/protocol.md, "RMPP"): saquery then shows that MAD's records
// and so must we, with ErrTableTruncated.
func TestOracleSATablesEqualSaquery(t *testing.T) {
	ibsimtest.Require(t)
	const at = "host1"
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "two-switch.net"), ibsimtest.Options{KeepSM: true})
	tr := fab.Dial(at, false)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 2 * time.Second})
	defer e.Close()
	local, err := tr.Port()
	if err != nil || local.SMLID == 0 {
		t.Fatalf("port %+v: %v", local, err)
	}
	sm := sa.Address(local)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	query := func(args ...string) string {
		out, err := fab.Tool(at, "saquery", args...)
		if err != nil {
			t.Fatalf("saquery %v: %v", args, err)
		}
		return out
	}
	truncatedOK := func(what string, err error) {
		t.Helper()
		if err != nil && !errors.Is(err, ibmad.ErrTableTruncated) {
			t.Fatalf("%s: %v", what, err)
		}
		if err != nil {
			t.Logf("%s: %v (as saquery)", what, err)
		}
	}

	// Whole tables.
	nrs, err := sa.NodeRecords(ctx, e, sm)
	truncatedOK("NodeRecords", err)
	sameSet(t, "NR", keys(nrs, nrKey), keysOf(saRecords(query("NR"), "NodeRecord dump:"), nrKeyOf))
	pirs, err := sa.Table(ctx, e, sm, ibmad.AttrPortInfoRecord, 0, ibmad.PortInfoRecord{})
	truncatedOK("PortInfoRecords", err)
	sameSet(t, "PIR", keys(pirs, pirKey), keysOf(saRecords(query("PIR"), "PortInfoRecord dump:"), pirKeyOf))
	lrs, err := sa.Table(ctx, e, sm, ibmad.AttrLinkRecord, 0, ibmad.LinkRecord{})
	if err != nil {
		t.Fatalf("LinkRecords: %v", err) // 16 records of 8 bytes: one whole MAD
	}
	sameSet(t, "LR", keys(lrs, lrKey), keysOf(saRecords(query("LR"), "LinkRecord dump:"), lrKeyOf))
	lfts, err := sa.Table(ctx, e, sm, ibmad.AttrLFTRecord, 0, ibmad.LFTRecord{})
	if err != nil {
		t.Fatalf("LFTRecords: %v", err)
	}
	sameSet(t, "LFTR", keys(lfts, lftKey), keysOf(saRecords(query("LFTR"), "LFT Record dump:"), lftKeyOf))
	swirs, err := sa.Table(ctx, e, sm, ibmad.AttrSwitchInfoRecord, 0, ibmad.SwitchInfoRecord{})
	if err != nil {
		t.Fatalf("SwitchInfoRecords: %v", err)
	}
	sameSet(t, "SWIR", keys(swirs, swirKey), keysOf(saRecords(query("SWIR"), "SwitchInfoRecord dump:"), swirKeyOf))

	// One key at a time, for every LID the links name.
	lids := map[uint16]bool{}
	for _, l := range lrs {
		lids[l.FromLID] = true
	}
	perKey := 0
	for lid := range lids {
		q := ibmad.NodeRecord{LID: lid}
		b, _ := q.MarshalBinary()
		tab, err := sa.GetTable(ctx, e, sm, ibmad.AttrNodeRecord, ibmad.NRCompLID, b)
		if err != nil || tab.Len() != 1 {
			t.Fatalf("NodeRecord of LID %d: %v", lid, err)
		}
		var nr ibmad.NodeRecord
		_ = nr.UnmarshalBinary(tab.Record(0))
		sameSet(t, fmt.Sprintf("NR %d", lid), []string{nrKey(nr)}, keysOf(saRecords(query("NR", fmt.Sprint(lid)), "NodeRecord dump:"), nrKeyOf))
		first := uint8(1)
		if nr.NodeInfo.NodeType == ibmad.NodeTypeSwitch {
			first = 0
		}
		for port := first; port <= nr.NodeInfo.NumPorts; port++ {
			key := fmt.Sprintf("%d/%d", lid, port)
			pir, err := sa.PortInfoRecord(ctx, e, sm, lid, port)
			sameOne(t, "PIR "+key, pirKey(pir), err, keysOf(saRecords(query("PIR", key), "PortInfoRecord dump:"), pirKeyOf))
			if port == 0 {
				continue
			}
			lr, err := sa.LinkRecordFrom(ctx, e, sm, lid, port)
			sameOne(t, "LR "+key, lrKey(lr), err, keysOf(saRecords(query("LR", key), "LinkRecord dump:"), lrKeyOf))
			perKey += 2
		}
		if nr.NodeInfo.NodeType == ibmad.NodeTypeSwitch {
			rec, err := sa.LFTRecord(ctx, e, sm, lid, 0)
			if err != nil {
				t.Fatalf("LFTR %d/0: %v", lid, err)
			}
			sameSet(t, fmt.Sprintf("LFTR %d/0", lid), []string{lftKey(rec)}, keysOf(saRecords(query("LFTR", fmt.Sprintf("%d/0", lid)), "LFT Record dump:"), lftKeyOf))
			if _, err := sa.LFTRecord(ctx, e, sm, lid, 1); !sa.IsNoRecords(err) {
				t.Errorf("LFTR %d/1 (beyond the top LID): %v, want no records", lid, err)
			}
			perKey++
		}
	}
	t.Logf("tables: %d NR, %d PIR, %d LR, %d LFTR, %d SWIR; %d LIDs, %d single-key queries equal to saquery's",
		len(nrs), len(pirs), len(lrs), len(lfts), len(swirs), len(lids), perKey)
}

// namedTables is what an SA's tables say, in names that hold across two
// fabrics whose GUIDs and LIDs differ ("desc/port").
type namedTables struct {
	nodes, links, ports, lftBlocks, switches []string
	nextHop                                  []string // "switch: dest -> neighbour"
}

// readNamed reads one SA's tables, enumerating by LID (one record per
// query, so that ibsim's one-MAD answers are whole) where a table would
// not fit one MAD.
func readNamed(t *testing.T, ctx context.Context, e *ibmad.Engine, sm ibmad.Address, v *fabView) namedTables {
	t.Helper()
	var n namedTables
	name := func(lid uint16) string {
		if s, ok := v.byLID[lid]; ok {
			return s
		}
		return fmt.Sprintf("LID %d?", lid)
	}
	node := func(lid uint16) string { return strings.Split(name(lid), "/")[0] }
	lrs, err := sa.Table(ctx, e, sm, ibmad.AttrLinkRecord, 0, ibmad.LinkRecord{})
	if err != nil {
		t.Fatalf("LinkRecords: %v", err)
	}
	neighbour := map[string]string{}
	for _, l := range lrs {
		n.links = append(n.links, fmt.Sprintf("%s[%d] -> %s[%d]", node(l.FromLID), l.FromPort, node(l.ToLID), l.ToPort))
		neighbour[fmt.Sprintf("%s[%d]", node(l.FromLID), l.FromPort)] = node(l.ToLID)
	}
	for lid := range v.byLID {
		q := ibmad.NodeRecord{LID: lid}
		b, _ := q.MarshalBinary()
		tab, err := sa.GetTable(ctx, e, sm, ibmad.AttrNodeRecord, ibmad.NRCompLID, b)
		if err != nil {
			t.Fatalf("NodeRecord of LID %d: %v", lid, err)
		}
		for i := 0; i < tab.Len(); i++ {
			var nr ibmad.NodeRecord
			_ = nr.UnmarshalBinary(tab.Record(i))
			n.nodes = append(n.nodes, fmt.Sprintf("%s %s", name(nr.LID), nr.NodeInfo.NodeType))
			first := uint8(1)
			sw := nr.NodeInfo.NodeType == ibmad.NodeTypeSwitch
			if sw {
				first = 0
			}
			for port := first; port <= nr.NodeInfo.NumPorts; port++ {
				if !sw && port != nr.NodeInfo.LocalPortNum {
					continue
				}
				pir, err := sa.PortInfoRecord(ctx, e, sm, lid, port)
				if sa.IsNoRecords(err) {
					n.ports = append(n.ports, fmt.Sprintf("%s[%d] none", node(lid), port))
					continue
				} else if err != nil {
					t.Fatalf("PortInfoRecord %d/%d: %v", lid, port, err)
				}
				n.ports = append(n.ports, fmt.Sprintf("%s[%d] lid %s %s %s", node(lid), port, name(pir.LID), pir.PortInfo.PortState, pir.PortInfo.PortPhysState))
			}
			if !sw {
				continue
			}
			blocks, err := sa.Table(ctx, e, sm, ibmad.AttrLFTRecord, ibmad.LFTRCompLID, ibmad.LFTRecord{LID: lid})
			if err != nil {
				t.Fatalf("LFTRecords %d: %v", lid, err)
			}
			n.lftBlocks = append(n.lftBlocks, fmt.Sprintf("%s: %d blocks", node(lid), len(blocks)))
			for _, blk := range blocks {
				for i, port := range blk.LFT {
					dlid := uint16(int(blk.Block)*64 + i)
					if port == ibmad.LFTNoRoute {
						if _, known := v.byLID[dlid]; known {
							n.nextHop = append(n.nextHop, fmt.Sprintf("%s: %s unrouted", node(lid), name(dlid)))
						}
						continue
					}
					hop := "itself"
					if port != 0 {
						hop = neighbour[fmt.Sprintf("%s[%d]", node(lid), port)]
					}
					n.nextHop = append(n.nextHop, fmt.Sprintf("%s: %s -> %s", node(lid), name(dlid), hop))
				}
			}
		}
	}
	swirs, err := sa.Table(ctx, e, sm, ibmad.AttrSwitchInfoRecord, 0, ibmad.SwitchInfoRecord{})
	if err != nil {
		t.Fatalf("SwitchInfoRecords: %v", err)
	}
	for _, s := range swirs {
		n.switches = append(n.switches, name(s.LID))
	}
	for _, l := range [][]string{n.nodes, n.links, n.ports, n.lftBlocks, n.switches, n.nextHop} {
		sort.Strings(l)
	}
	return n
}

// TestOracleSimSATablesEqualOpenSM: on the same topology the built-in
// sim's SA tables say what OpenSM's say: the same NodeRecords, LinkRecords,
// PortInfoRecord states, LFT blocks per switch and, for every destination,
// the same next-hop neighbour (parallel links may differ in the port),
// and the same switches. The sim's whole tables (RMPP, several segments
// where large) also agree with its one-key answers.
func TestOracleSimSATablesEqualOpenSM(t *testing.T) {
	ibsimtest.Require(t)
	const topo, at = "two-switch.net", "host1"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startTwin(t, topo, at, ibmad.Options{Timeout: 2 * time.Second})
	simE, simSrc := w.simE, w.simSrc

	want := readNamed(t, ctx, w.osmE, sa.Address(w.osmSrc), w.osmView)
	got := readNamed(t, ctx, simE, sa.Address(simSrc), w.simView)
	for _, c := range []struct {
		what     string
		sim, osm []string
	}{
		{"NodeRecords", got.nodes, want.nodes}, {"LinkRecords", got.links, want.links},
		{"PortInfoRecords", got.ports, want.ports}, {"LFT blocks", got.lftBlocks, want.lftBlocks},
		{"next hops", got.nextHop, want.nextHop}, {"SwitchInfoRecords", got.switches, want.switches},
	} {
		if strings.Join(c.sim, "\n") != strings.Join(c.osm, "\n") {
			t.Errorf("%s: sim (%d)\n  %s\nOpenSM (%d)\n  %s", c.what, len(c.sim), strings.Join(c.sim, "\n  "), len(c.osm), strings.Join(c.osm, "\n  "))
		} else if len(c.sim) == 0 {
			t.Errorf("%s: none on either side", c.what)
		} else {
			t.Logf("%s: %d equal", c.what, len(c.sim))
		}
	}

	// The sim's whole tables hold what its one-key answers hold.
	sm := sa.Address(simSrc)
	nrs, err := sa.NodeRecords(ctx, simE, sm)
	if err != nil || len(nrs) != len(got.nodes) {
		t.Errorf("sim NodeRecords table: %d, %v; one by one %d", len(nrs), err, len(got.nodes))
	}
	pirs, err := sa.Table(ctx, simE, sm, ibmad.AttrPortInfoRecord, 0, ibmad.PortInfoRecord{})
	found := 0
	for _, p := range got.ports {
		if !strings.HasSuffix(p, " none") {
			found++
		}
	}
	if err != nil || len(pirs) != found {
		t.Errorf("sim PortInfoRecords table: %d, %v; one by one %d", len(pirs), err, found)
	}
}
