package ibsim_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// fabView names a fabric's nodes and ports, so one query can be built for
// two fabrics (OpenSM's under ibsim and the built-in sim's) whose GUIDs
// and LIDs differ, and the answers compared by name.
type fabView struct {
	nodes map[string]*viewNode
	byLID map[uint16]string // "desc/port"
}

type viewNode struct {
	guid  ibmad.GUID
	sw    bool
	ports map[uint8]viewPort // a switch has port 0 only
}

type viewPort struct {
	guid ibmad.GUID
	lid  uint16
}

func (v *fabView) add(desc string, node ibmad.GUID, sw bool, port uint8, guid ibmad.GUID, lid uint16) {
	n := v.nodes[desc]
	if n == nil {
		n = &viewNode{guid: node, sw: sw, ports: map[uint8]viewPort{}}
		v.nodes[desc] = n
	}
	n.ports[port] = viewPort{guid: guid, lid: lid}
	v.byLID[lid] = fmt.Sprintf("%s/%d", desc, port)
}

func (v *fabView) port(desc string, num uint8) viewPort {
	n := v.nodes[desc]
	if n == nil {
		panic("no node " + desc)
	}
	return n.ports[num]
}

var (
	guidLineRe = regexp.MustCompile(`^(?:switchguid|caguid)=0x([0-9a-f]+)`)
	swHeaderRe = regexp.MustCompile(`^Switch\s+\d+\s+"[^"]*"\s+#\s+"(.*)" base port 0 lid (\d+) lmc \d+`)
	caHeaderRe = regexp.MustCompile(`^Ca\s+\d+\s+"[^"]*"\s+#\s+"(.*)"`)
	caPortRe   = regexp.MustCompile(`^\[(\d+)\]\(([0-9a-f]+)\)\s.*#\s+lid (\d+) lmc \d+ `)
)

// ibnetdiscoverView reads stock ibnetdiscover's topology output.
func ibnetdiscoverView(out string) *fabView {
	v := &fabView{nodes: map[string]*viewNode{}, byLID: map[uint16]string{}}
	var guid ibmad.GUID
	ca := ""
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if m := guidLineRe.FindStringSubmatch(line); m != nil {
			g, _ := strconv.ParseUint(m[1], 16, 64)
			guid, ca = ibmad.GUID(g), ""
			continue
		}
		if m := swHeaderRe.FindStringSubmatch(line); m != nil {
			lid, _ := strconv.ParseUint(m[2], 10, 16)
			v.add(m[1], guid, true, 0, guid, uint16(lid))
			continue
		}
		if m := caHeaderRe.FindStringSubmatch(line); m != nil {
			ca = m[1]
			continue
		}
		if m := caPortRe.FindStringSubmatch(line); m != nil && ca != "" {
			num, _ := strconv.ParseUint(m[1], 10, 8)
			pg, _ := strconv.ParseUint(m[2], 16, 64)
			lid, _ := strconv.ParseUint(m[3], 10, 16)
			v.add(ca, guid, false, uint8(num), ibmad.GUID(pg), uint16(lid))
		}
	}
	return v
}

// simView reads the built-in sim's own state.
func simView(f *sim.Fabric) *fabView {
	v := &fabView{nodes: map[string]*viewNode{}, byLID: map[uint16]string{}}
	for _, n := range f.Nodes() {
		if n.IsSwitch() {
			v.add(n.Desc, n.GUID, true, 0, n.GUID, n.Ports[0].LID)
			continue
		}
		for _, p := range n.Ports[1:] {
			if p.LID != 0 {
				v.add(n.Desc, n.GUID, false, p.Num, p.GUID, p.LID)
			}
		}
	}
	return v
}

// saCase is one SA request, built from a fabric's view.
type saCase struct {
	name   string
	method ibmad.Method
	attr   ibmad.AttrID
	mask   uint64
	fill   func(v *fabView, src ibmad.PortAttributes, b []byte)
}

// anyEnd names the cases where OpenSM picks the missing end of the path
// by its own table order: only the status is compared.
var anyEnd = map[string]bool{"PR SGID only": true, "PR empty mask": true}

func nr(fill func(v *fabView, nr *ibmad.NodeRecord)) func(*fabView, ibmad.PortAttributes, []byte) {
	return func(v *fabView, _ ibmad.PortAttributes, b []byte) {
		var r ibmad.NodeRecord
		fill(v, &r)
		_ = r.MarshalTo(b)
	}
}

func pr(fill func(v *fabView, src ibmad.PortAttributes, pr *ibmad.PathRecord)) func(*fabView, ibmad.PortAttributes, []byte) {
	return func(v *fabView, src ibmad.PortAttributes, b []byte) {
		var r ibmad.PathRecord
		fill(v, src, &r)
		_ = r.MarshalTo(b)
	}
}

func desc(s string) ibmad.NodeDescription { return ibmad.NewNodeDescription(s) }

func saCases() []saCase {
	const (
		nd, ng, pg, lid, pn = ibmad.NRCompNodeDesc, ibmad.NRCompNodeGUID, ibmad.NRCompPortGUID, ibmad.NRCompLID, ibmad.NRCompLocalPortNum
		reserved1, bit15    = uint64(1) << 1, uint64(1) << 15
		nodeType, numPorts  = uint64(1) << 4, uint64(1) << 5
		dgid, sgid          = ibmad.PRCompDGID, ibmad.PRCompSGID
	)
	get := ibmad.MethodGet
	byDesc := func(s string) func(*fabView, *ibmad.NodeRecord) {
		return func(_ *fabView, r *ibmad.NodeRecord) { r.NodeDescription = desc(s) }
	}
	byDescPort := func(s string, p uint8) func(*fabView, *ibmad.NodeRecord) {
		return func(_ *fabView, r *ibmad.NodeRecord) { r.NodeDescription, r.NodeInfo.LocalPortNum = desc(s), p }
	}
	to := func(d string, p uint8) func(*fabView, ibmad.PortAttributes, *ibmad.PathRecord) {
		return func(v *fabView, src ibmad.PortAttributes, r *ibmad.PathRecord) {
			r.DGID, r.SGID = ibmad.MakeGID(src.GIDPrefix, v.port(d, p).guid), src.GID()
		}
	}
	return []saCase{
		{"NR desc single-port CA", get, ibmad.AttrNodeRecord, nd, nr(byDesc("host1"))},
		{"NR desc switch", get, ibmad.AttrNodeRecord, nd, nr(byDesc("sw2"))},
		{"NR desc two-port CA", get, ibmad.AttrNodeRecord, nd, nr(byDesc("host5"))},
		{"NR desc unknown", get, ibmad.AttrNodeRecord, nd, nr(byDesc("nobody"))},
		{"NR desc prefix only", get, ibmad.AttrNodeRecord, nd, nr(byDesc("host"))},
		{"NR desc, bytes after the NUL", get, ibmad.AttrNodeRecord, nd, nr(func(_ *fabView, r *ibmad.NodeRecord) {
			r.NodeDescription = desc("host1")
			copy(r.NodeDescription[6:], "junk")
		})},
		{"NR desc+port 1", get, ibmad.AttrNodeRecord, nd | pn, nr(byDescPort("host5", 1))},
		{"NR desc+port 2", get, ibmad.AttrNodeRecord, nd | pn, nr(byDescPort("host5", 2))},
		{"NR desc+port 3 (none)", get, ibmad.AttrNodeRecord, nd | pn, nr(byDescPort("host5", 3))},
		{"NR desc+port 0 of a CA", get, ibmad.AttrNodeRecord, nd | pn, nr(byDescPort("host5", 0))},
		{"NR desc+port 0 of a switch", get, ibmad.AttrNodeRecord, nd | pn, nr(byDescPort("sw1", 0))},
		{"NR desc+port 3 of a switch", get, ibmad.AttrNodeRecord, nd | pn, nr(byDescPort("sw1", 3))},
		{"NR port GUID", get, ibmad.AttrNodeRecord, pg, nr(func(v *fabView, r *ibmad.NodeRecord) { r.NodeInfo.PortGUID = v.port("host5", 2).guid })},
		{"NR port GUID of a switch", get, ibmad.AttrNodeRecord, pg, nr(func(v *fabView, r *ibmad.NodeRecord) { r.NodeInfo.PortGUID = v.nodes["sw1"].guid })},
		{"NR node GUID two-port", get, ibmad.AttrNodeRecord, ng, nr(func(v *fabView, r *ibmad.NodeRecord) { r.NodeInfo.NodeGUID = v.nodes["host5"].guid })},
		{"NR node GUID+port", get, ibmad.AttrNodeRecord, ng | pn, nr(func(v *fabView, r *ibmad.NodeRecord) {
			r.NodeInfo.NodeGUID, r.NodeInfo.LocalPortNum = v.nodes["host5"].guid, 2
		})},
		{"NR LID", get, ibmad.AttrNodeRecord, lid, nr(func(v *fabView, r *ibmad.NodeRecord) { r.LID = v.port("host5", 2).lid })},
		{"NR LID unused", get, ibmad.AttrNodeRecord, lid, nr(func(v *fabView, r *ibmad.NodeRecord) { r.LID = 999 })},
		{"NR LID and other node's desc", get, ibmad.AttrNodeRecord, lid | nd, nr(func(v *fabView, r *ibmad.NodeRecord) {
			r.LID, r.NodeDescription = v.port("host4", 1).lid, desc("host1")
		})},
		{"NR empty mask", get, ibmad.AttrNodeRecord, 0, nr(byDesc("host1"))},
		{"NR reserved bit only", get, ibmad.AttrNodeRecord, reserved1, nr(byDesc("host1"))},
		{"NR bit 15 only (the old NodeDesc)", get, ibmad.AttrNodeRecord, bit15, nr(byDesc("host1"))},
		{"NR bit 40 only", get, ibmad.AttrNodeRecord, 1 << 40, nr(byDesc("host1"))},
		{"NR desc + unknown bits", get, ibmad.AttrNodeRecord, nd | reserved1 | bit15 | 1<<63, nr(byDesc("host1"))},
		{"NR desc + node type CA", get, ibmad.AttrNodeRecord, nd | nodeType, nr(func(_ *fabView, r *ibmad.NodeRecord) {
			r.NodeDescription, r.NodeInfo.NodeType = desc("host1"), ibmad.NodeTypeCA
		})},
		{"NR desc + node type switch", get, ibmad.AttrNodeRecord, nd | nodeType, nr(func(_ *fabView, r *ibmad.NodeRecord) {
			r.NodeDescription, r.NodeInfo.NodeType = desc("host1"), ibmad.NodeTypeSwitch
		})},
		{"NR desc + num ports 2", get, ibmad.AttrNodeRecord, nd | numPorts, nr(func(_ *fabView, r *ibmad.NodeRecord) {
			r.NodeDescription, r.NodeInfo.NumPorts = desc("host5"), 2
		})},
		{"NR desc + num ports 1", get, ibmad.AttrNodeRecord, nd | numPorts, nr(func(_ *fabView, r *ibmad.NodeRecord) {
			r.NodeDescription, r.NodeInfo.NumPorts = desc("host5"), 1
		})},

		{"PR DGID+SGID", get, ibmad.AttrPathRecord, dgid | sgid, pr(to("host4", 1))},
		{"PR DGID+SGID two-port CA port 2", get, ibmad.AttrPathRecord, dgid | sgid, pr(to("host5", 2))},
		{"PR DGID only", get, ibmad.AttrPathRecord, dgid, pr(to("host4", 1))},
		{"PR DGID+SGID + unknown bits", get, ibmad.AttrPathRecord, dgid | sgid | 1<<7 | 1<<40, pr(to("host4", 1))},
		{"PR DGID unknown GUID", get, ibmad.AttrPathRecord, dgid | sgid, pr(func(_ *fabView, src ibmad.PortAttributes, r *ibmad.PathRecord) {
			r.DGID, r.SGID = ibmad.MakeGID(src.GIDPrefix, 0xdead), src.GID()
		})},
		{"PR DGID foreign prefix", get, ibmad.AttrPathRecord, dgid | sgid, pr(func(v *fabView, src ibmad.PortAttributes, r *ibmad.PathRecord) {
			r.DGID, r.SGID = ibmad.MakeGID(0xfec0000000000001, v.port("host4", 1).guid), src.GID()
		})},
		{"PR DLID", get, ibmad.AttrPathRecord, ibmad.PRCompDLID | sgid, pr(func(v *fabView, src ibmad.PortAttributes, r *ibmad.PathRecord) {
			r.DLID, r.SGID = v.port("host4", 1).lid, src.GID()
		})},
		{"PR DLID unused", get, ibmad.AttrPathRecord, ibmad.PRCompDLID | sgid, pr(func(_ *fabView, src ibmad.PortAttributes, r *ibmad.PathRecord) {
			r.DLID, r.SGID = 999, src.GID()
		})},
		{"PR SGID only", get, ibmad.AttrPathRecord, sgid, pr(func(_ *fabView, src ibmad.PortAttributes, r *ibmad.PathRecord) { r.SGID = src.GID() })},
		{"PR empty mask", get, ibmad.AttrPathRecord, 0, pr(func(*fabView, ibmad.PortAttributes, *ibmad.PathRecord) {})},
		{"PR SGID foreign prefix", get, ibmad.AttrPathRecord, dgid | sgid, pr(func(v *fabView, src ibmad.PortAttributes, r *ibmad.PathRecord) {
			r.DGID, r.SGID = ibmad.MakeGID(src.GIDPrefix, v.port("host4", 1).guid), ibmad.MakeGID(0xfec0000000000001, src.GID().GUID())
		})},
		{"PR DGID and DLID of different ports", get, ibmad.AttrPathRecord, dgid | ibmad.PRCompDLID, pr(func(v *fabView, src ibmad.PortAttributes, r *ibmad.PathRecord) {
			r.DGID, r.DLID = ibmad.MakeGID(src.GIDPrefix, v.port("host4", 1).guid), v.port("host2", 1).lid
		})},
		{"PR half a ServiceID", get, ibmad.AttrPathRecord, dgid | sgid | 1<<0, pr(to("host4", 1))},
		{"PR Set", ibmad.MethodSet, ibmad.AttrPathRecord, dgid | sgid, pr(to("host4", 1))},
		{"NR Set", ibmad.MethodSet, ibmad.AttrNodeRecord, nd, nr(byDesc("host1"))},

		{"ClassPortInfo", get, ibmad.AttrClassPortInfo, 0, func(*fabView, ibmad.PortAttributes, []byte) {}},
		{"unknown attribute", get, 0x00EE, 0, func(*fabView, ibmad.PortAttributes, []byte) {}},
		{"unknown method", 0x1F, ibmad.AttrNodeRecord, nd, nr(byDesc("host1"))},
		{"still answering after all that", get, ibmad.AttrNodeRecord, nd, nr(byDesc("host4"))},
	}
}

// saAnswer is what an SA answered, in names.
type saAnswer struct {
	silent bool // no answer at all
	status ibmad.Status
	who    string // NodeRecord: "desc/port"; PathRecord: the DLID's "desc/port"
}

func (a saAnswer) String() string {
	if a.silent {
		return "no answer"
	}
	return fmt.Sprintf("%s %q", a.status, a.who)
}

func askSA(ctx context.Context, e *ibmad.Engine, src ibmad.PortAttributes, v *fabView, c saCase) (saAnswer, error) {
	q := ibmad.NewSAGet(c.attr, c.mask)
	q.Method = c.method
	c.fill(v, src, q.Data[:])
	req := &ibmad.Request{Addr: ibmad.GSIAddress(src.SMLID, src.SMSL)}
	_ = q.MarshalTo(req.MAD[:])
	var resp ibmad.Response
	if err := e.Do(ctx, req, &resp); errors.Is(err, ibmad.ErrTimeout) {
		return saAnswer{silent: true}, nil
	} else if err != nil {
		return saAnswer{}, err
	}
	a := saAnswer{status: resp.MAD.Status()}
	if a.status != 0 {
		return a, nil
	}
	switch c.attr {
	case ibmad.AttrNodeRecord:
		var r ibmad.NodeRecord
		_ = r.UnmarshalBinary(resp.MAD.SAData())
		a.who = fmt.Sprintf("%s/%d", r.NodeDescription.String(), r.NodeInfo.LocalPortNum)
		if want := v.byLID[r.LID]; want != a.who {
			a.who += fmt.Sprintf(" (but LID %d is %s)", r.LID, want)
		}
	case ibmad.AttrPathRecord:
		var r ibmad.PathRecord
		_ = r.UnmarshalBinary(resp.MAD.SAData())
		a.who = v.byLID[r.DLID]
		if anyEnd[c.name] {
			a.who = ""
		}
	}
	return a, nil
}

// TestOracleSimSAEqualsOpenSM: the built-in sim's SA answers every request
// in saCases with the status OpenSM answers (on ibsim, same topology), and
// a successful Get names the same node and port. Component mask bits
// OpenSM ignores, Gets matching several records or none, and port
// selection by LocalPortNum are all covered.
func TestOracleSimSAEqualsOpenSM(t *testing.T) {
	ibsimtest.Require(t)
	const topo, at = "two-switch.net", "host1"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	w := startTwin(t, topo, at, ibmad.Options{Timeout: time.Second, Retries: 1})
	if len(w.osmView.nodes["host5"].ports) != 2 || len(w.osmView.nodes) != 7 {
		t.Fatalf("ibnetdiscover view %+v from\n%s", w.osmView.nodes, w.discovered)
	}

	compareSA(t, ctx, saCases(), w)

	// host5's first port unplugged, in both, and OpenSM has swept: its
	// records and paths are gone.
	if err := w.fab.Console(`Unlink "host5"[1]`); err != nil {
		t.Fatal(err)
	}
	if err := w.sf.SetLinkState("host5", 1, false, true); err != nil {
		t.Fatal(err)
	}
	swept := saCase{"NR desc two-port CA", ibmad.MethodGet, ibmad.AttrNodeRecord, ibmad.NRCompNodeDesc, nr(func(_ *fabView, r *ibmad.NodeRecord) { r.NodeDescription = desc("host5") })}
	for deadline := time.Now().Add(90 * time.Second); ; {
		a, err := askSA(ctx, w.osmE, w.osmSrc, w.osmView, swept)
		if err == nil && a.status == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("OpenSM still answers %v %v for host5 after its port 1 was unplugged", a, err)
		}
		time.Sleep(200 * time.Millisecond) // polling OpenSM's sweep, bounded by the deadline
	}
	var after []saCase
	for _, c := range saCases() {
		if strings.Contains(c.name, "port") || strings.Contains(c.name, "two-port") || strings.HasPrefix(c.name, "PR DGID+SGID") {
			after = append(after, c)
		}
	}
	after = append(after, saCase{"PR to the unplugged port", ibmad.MethodGet, ibmad.AttrPathRecord, ibmad.PRCompDGID | ibmad.PRCompSGID,
		pr(func(v *fabView, src ibmad.PortAttributes, r *ibmad.PathRecord) {
			r.DGID, r.SGID = ibmad.MakeGID(src.GIDPrefix, v.port("host5", 1).guid), src.GID()
		})})
	compareSA(t, ctx, after, w)
}

// saTwin is one topology twice, each with an engine attached at the same
// node: on ibsim with OpenSM as its SA, and in the built-in sim; each
// with its view by name.
type saTwin struct {
	fab              *ibsimtest.Fabric
	sf               *sim.Fabric
	osmE, simE       *ibmad.Engine
	osmSrc, simSrc   ibmad.PortAttributes
	osmView, simView *fabView
	discovered       string // ibnetdiscover's output on ibsim
}

// startTwin starts topo on ibsim (OpenSM kept running) and in the sim,
// and attaches an engine with options eo at node at of each.
func startTwin(t *testing.T, topo, at string, eo ibmad.Options) *saTwin {
	t.Helper()
	w := &saTwin{fab: ibsimtest.Start(t, filepath.Join(topoDir, topo), ibsimtest.Options{KeepSM: true})}
	out, err := w.fab.Tool(at, "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	w.discovered, w.osmView = out, ibnetdiscoverView(out)
	osmTr := w.fab.Dial(at, false)
	osmE := ibmad.NewEngine(osmTr, eo)
	t.Cleanup(func() { osmE.Close() })
	w.osmE = osmE
	if w.osmSrc, err = osmTr.Port(); err != nil || w.osmSrc.SMLID == 0 {
		t.Fatalf("port %+v: %v", w.osmSrc, err)
	}

	st, err := sim.LoadTopology(filepath.Join(topoDir, topo))
	if err != nil {
		t.Fatal(err)
	}
	if w.sf, err = sim.New(st, sim.Options{}); err != nil {
		t.Fatal(err)
	}
	simTr, err := w.sf.Attach(at, 0)
	if err != nil {
		t.Fatal(err)
	}
	simE := ibmad.NewEngine(simTr, eo)
	t.Cleanup(func() { simE.Close() })
	w.simE = simE
	w.simSrc, _ = simTr.Port()
	w.simView = simView(w.sf)
	return w
}

// compareSA asks both fabrics of w every case and compares the answers.
func compareSA(t *testing.T, ctx context.Context, cases []saCase, w *saTwin) {
	t.Helper()
	for _, c := range cases {
		want, err := askSA(ctx, w.osmE, w.osmSrc, w.osmView, c)
		if err != nil {
			t.Fatalf("%s: OpenSM: %v", c.name, err)
		}
		got, err := askSA(ctx, w.simE, w.simSrc, w.simView, c)
		if err != nil {
			t.Fatalf("%s: sim: %v", c.name, err)
		}
		if got != want {
			t.Errorf("%s: sim answers %s, OpenSM %s", c.name, got, want)
		} else {
			t.Logf("%s: %s", c.name, want)
		}
	}
}
