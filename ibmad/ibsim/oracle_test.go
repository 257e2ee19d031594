package ibsim_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
)

const topoDir = "../../testdata/topologies"

// parseDump reads smpquery's "Key:.....value" lines.
func parseDump(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "\t") {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		m[strings.TrimSpace(k)] = strings.TrimSpace(strings.TrimLeft(v, "."))
	}
	return m
}

func num(s string) (uint64, bool) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseUint(f[0], 0, 64)
	return v, err == nil
}

var mtuNames = map[uint8]string{1: "256", 2: "512", 3: "1024", 4: "2048", 5: "4096"}
var widthNames = map[uint8]string{1: "1X", 2: "4X", 4: "8X", 8: "12X", 16: "2X"}
var nodeTypeNames = map[ibmad.NodeType]string{ibmad.NodeTypeCA: "Channel Adapter", ibmad.NodeTypeSwitch: "Switch", ibmad.NodeTypeRouter: "Router"}

// expectNodeInfo returns smpquery's field values for ours.
func expectNodeInfo(n *ibmad.NodeInfo) map[string]any {
	return map[string]any{"BaseVers": n.BaseVersion, "ClassVers": n.ClassVersion, "NodeType": nodeTypeNames[n.NodeType],
		"NumPorts": n.NumPorts, "SystemGuid": uint64(n.SystemImageGUID), "Guid": uint64(n.NodeGUID), "PortGuid": uint64(n.PortGUID),
		"PartCap": n.PartitionCap, "DevId": n.DeviceID, "Revision": n.Revision, "LocalPort": n.LocalPortNum, "VendorId": n.VendorID}
}

func expectPortInfo(p *ibmad.PortInfo) map[string]any {
	return map[string]any{"GidPrefix": p.GIDPrefix, "Lid": p.LID, "SMLid": p.MasterSMLID, "CapMask": p.CapabilityMask,
		"DiagCode": p.DiagCode, "MkeyLeasePeriod": p.MKeyLeasePeriod, "LocalPort": p.LocalPortNum,
		"LinkWidthActive": widthNames[p.LinkWidthActive], "LinkState": p.PortState.String(),
		"PhysLinkState": p.PortPhysState.String(), "ProtectBits": p.MKeyProtectBits, "LMC": p.LMC,
		"NeighborMTU": mtuNames[p.NeighborMTU], "SMSL": p.MasterSMSL, "VLHighLimit": p.VLHighLimit,
		"VLArbHighCap": p.VLArbHighCap, "VLArbLowCap": p.VLArbLowCap, "MtuCap": mtuNames[p.MTUCap],
		"VLStallCount": p.VLStallCount, "HoqLife": p.HOQLife, "PartEnforceInb": p.PartEnforceInbound,
		"PartEnforceOutb": p.PartEnforceOutbound, "FilterRawInb": p.FilterRawInbound, "FilterRawOutb": p.FilterRawOutbound,
		"MkeyViolations": p.MKeyViolations, "PkeyViolations": p.PKeyViolations, "QkeyViolations": p.QKeyViolations,
		"GuidCap": p.GUIDCap, "ClientReregister": p.ClientReregister, "McastPkeyTrapSuppressionEnabled": p.McastPKeyTrapSuppress,
		"SubnetTimeout": p.SubnetTimeout, "RespTimeVal": p.RespTimeValue, "LocalPhysErr": p.LocalPhyErrors,
		"OverrunErr": p.OverrunErrors, "MaxCreditHint": p.MaxCreditHint, "RoundTrip": p.LinkRoundTripLatency,
		"CapabilityMask2": p.CapabilityMask2, "LinkSpeedExtSupported": p.LinkSpeedExtSupported,
		"LinkSpeedExtEnabled": p.LinkSpeedExtEnabled}
}

func expectSwitchInfo(s *ibmad.SwitchInfo) map[string]any {
	return map[string]any{"LinearFdbCap": s.LinearFDBCap, "RandomFdbCap": s.RandomFDBCap, "McastFdbCap": s.MulticastFDBCap,
		"LinearFdbTop": s.LinearFDBTop, "DefPort": s.DefaultPort, "DefMcastPrimPort": s.DefaultMulticastPrimaryPort,
		"DefMcastNotPrimPort": s.DefaultMulticastNotPrimaryPort, "LifeTime": s.LifeTimeValue, "StateChange": s.PortStateChange,
		"OptSLtoVLMapping": s.OptimizedSLtoVLMapping, "LidsPerPort": s.LIDsPerPort, "PartEnforceCap": s.PartitionEnforcementCap,
		"InboundPartEnf": s.InboundEnforcementCap, "OutboundPartEnf": s.OutboundEnforcementCap,
		"FilterRawInbound": s.FilterRawInboundCap, "FilterRawOutbound": s.FilterRawOutboundCap,
		"EnhancedPort0": s.EnhancedPort0, "MulticastFDBTop": s.MulticastFDBTop}
}

// compare checks every expected field against smpquery's dump and returns
// how many it compared.
func compare(t *testing.T, what string, want map[string]any, got map[string]string) int {
	t.Helper()
	n := 0
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: smpquery printed no %s", what, k)
			continue
		}
		var wv uint64
		switch v := w.(type) {
		case string:
			if g != v {
				t.Errorf("%s: %s: smpquery %q, ours %q", what, k, g, v)
			}
			n++
			continue
		case bool:
			if v {
				wv = 1
			}
		case uint8:
			wv = uint64(v)
		case uint16:
			wv = uint64(v)
		case uint32:
			wv = uint64(v)
		case uint64:
			wv = v
		}
		gv, ok := num(g)
		if !ok || gv != wv {
			t.Errorf("%s: %s: smpquery %q, ours %#x", what, k, g, wv)
		}
		n++
	}
	return n
}

func pathArg(p ibmad.DRPath) string { return p.String() }

var lftLine = regexp.MustCompile(`^0x([0-9a-fA-F]+) (\d+) :`)

// TestOracleSMPAndLFT: for every node reachable from two attach points,
// NodeInfo, NodeDescription, PortInfo and SwitchInfo read through our
// transport decode to what smpquery prints, and every switch's LFT equals
// what ibroute prints.
func TestOracleSMPAndLFT(t *testing.T) {
	ibsimtest.Require(t)
	for _, tc := range []struct {
		file  string
		nodes []string
		count int
	}{
		{"two-switch.net", []string{"host1", "sw2"}, 7},
		{"chain-5.net", []string{"hostA", "hostC"}, 8},
		{"fattree-128.net", []string{"H0-0", "H15-7"}, 152},
	} {
		t.Run(tc.file, func(t *testing.T) {
			fab := ibsimtest.Start(t, filepath.Join(topoDir, tc.file), ibsimtest.Options{})
			for _, at := range tc.nodes {
				t.Run("from-"+at, func(t *testing.T) {
					tr := fab.Dial(at, false)
					e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 2 * time.Second})
					defer e.Close()
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					defer cancel()
					sub, err := madtest.Walk(ctx, e)
					if err != nil {
						t.Fatal(err)
					}
					if len(sub.Nodes) != tc.count {
						t.Fatalf("walked %d nodes, topology has %d", len(sub.Nodes), tc.count)
					}
					var mu sync.Mutex
					fields, switches := 0, 0
					sem := make(chan struct{}, 3)
					var wg sync.WaitGroup
					for _, n := range sub.Nodes {
						wg.Add(1)
						sem <- struct{}{}
						go func(n *madtest.Node) {
							defer wg.Done()
							defer func() { <-sem }()
							c, sw := checkNode(t, ctx, fab, e, at, n)
							mu.Lock()
							fields += c
							switches += sw
							mu.Unlock()
						}(n)
					}
					wg.Wait()
					t.Logf("from %s: %d nodes, %d switch LFTs, %d fields equal to smpquery's", at, len(sub.Nodes), switches, fields)
				})
			}
		})
	}
}

func checkNode(t *testing.T, ctx context.Context, fab *ibsimtest.Fabric, e *ibmad.Engine, at string, n *madtest.Node) (fields, switches int) {
	path := pathArg(n.Path)
	what := fmt.Sprintf("%s (DR %s)", n.Desc, path)
	query := func(attr string, extra ...string) map[string]string {
		out, err := fab.Tool(at, "smpquery", append([]string{"-D", attr, path}, extra...)...)
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
		return parseDump(out)
	}
	// NodeInfo, again, so that LocalPortNum is the one of this path.
	m, err := madtest.Get(ctx, e, n.Path, ibmad.AttrNodeInfo, 0)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	var ni ibmad.NodeInfo
	_ = ni.UnmarshalBinary(m.SMPData())
	fields += compare(t, what+" NodeInfo", expectNodeInfo(&ni), query("nodeinfo"))
	if got := query("nodedesc")["Node Description"]; got != n.Desc {
		t.Errorf("%s: NodeDescription: smpquery %q, ours %q", what, got, n.Desc)
	}
	fields++
	// PortInfo of the port we enter by (modifier 0 on a CA) and of port 1.
	for _, port := range []uint32{0, 1} {
		if m, err = madtest.Get(ctx, e, n.Path, ibmad.AttrPortInfo, port); err != nil {
			t.Errorf("%s: PortInfo %d: %v", what, port, err)
			continue
		}
		var pi ibmad.PortInfo
		_ = pi.UnmarshalBinary(m.SMPData())
		fields += compare(t, fmt.Sprintf("%s PortInfo %d", what, port), expectPortInfo(&pi), query("portinfo", strconv.Itoa(int(port))))
	}
	if ni.NodeType != ibmad.NodeTypeSwitch {
		return
	}
	switches++
	if m, err = madtest.Get(ctx, e, n.Path, ibmad.AttrSwitchInfo, 0); err != nil {
		t.Errorf("%s: SwitchInfo: %v", what, err)
		return
	}
	var si ibmad.SwitchInfo
	_ = si.UnmarshalBinary(m.SMPData())
	fields += compare(t, what+" SwitchInfo", expectSwitchInfo(&si), query("switchinfo"))
	// The LFT, block by block, against ibroute.
	ours := map[uint16]uint8{}
	for b := uint32(0); b <= uint32(si.LinearFDBTop)/ibmad.LFTBlockSize; b++ {
		if m, err = madtest.Get(ctx, e, n.Path, ibmad.AttrLinearForwardingTable, b); err != nil {
			t.Errorf("%s: LFT block %d: %v", what, b, err)
			return
		}
		for i, port := range m.SMPData()[:ibmad.LFTBlockSize] {
			lid := uint16(b*ibmad.LFTBlockSize) + uint16(i)
			if port != ibmad.LFTNoRoute && lid <= si.LinearFDBTop {
				ours[lid] = port
			}
		}
	}
	out, err := fab.Tool(at, "ibroute", "-D", path)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	theirs := map[uint16]uint8{}
	for _, line := range strings.Split(out, "\n") {
		if mm := lftLine.FindStringSubmatch(line); mm != nil {
			lid, _ := strconv.ParseUint(mm[1], 16, 16)
			port, _ := strconv.ParseUint(mm[2], 10, 8)
			theirs[uint16(lid)] = uint8(port)
		}
	}
	if len(theirs) == 0 || fmt.Sprint(ours) != fmt.Sprint(theirs) {
		t.Errorf("%s: LFT differs from ibroute's:\n ours   %v\n ibroute %v", what, ours, theirs)
	}
	fields += len(theirs)
	return
}
