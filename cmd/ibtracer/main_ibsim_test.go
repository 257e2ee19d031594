package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

const topoDir = "../../testdata/topologies"

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// binary builds the ibtracer command once per test run, without cgo, as
// it ships.
func binary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ibtracer-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "ibtracer")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// runCLI runs ibtracer attached at node of fab, bounded to a minute.
func runCLI(t *testing.T, fab *ibsimtest.Fabric, node string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), append([]string{"--ib.transport=ibsim", "--ibsim.node=" + node}, args...)...)
	cmd.Env = []string{"IBSIM_SOCKNAME=" + fab.SockName, "PATH=" + os.Getenv("PATH")}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ibtracer: %v", err)
	}
	return out.String(), errb.String(), code
}

// allLIDs walks the fabric from node and returns every node's LID.
func allLIDs(t *testing.T, fab *ibsimtest.Fabric, node string) map[uint16]string {
	t.Helper()
	tr := fab.Dial(node, false)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 2 * time.Second})
	defer e.Close()
	ctx := context.Background()
	ports, err := madtest.WalkPortLIDs(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	lids := map[uint16]string{}
	for _, p := range ports {
		lids[p.LID] = p.Node.Desc
	}
	return lids
}

var (
	fromRe = regexp.MustCompile(`^From (.+?) \{0x([0-9a-f]+)\} portnum (\d+) lid (\d+)-(\d+) "(.*)"$`)
	hopRe  = regexp.MustCompile(`^\[(\d+)\] -> (.+?) port \{0x([0-9a-f]+)\}\[(\d+)\] lid (\d+)-(\d+) "(.*)"$`)
	toRe   = regexp.MustCompile(`^To (.+?) \{0x([0-9a-f]+)\} portnum (\d+) lid (\d+)-(\d+) "(.*)"$`)
)

func hexGUID(s string) string {
	v, _ := strconv.ParseUint(s, 16, 64)
	return ibmad.GUID(v).String()
}

// compareWithIbtracert checks our JSON hops against ibtracert's lines:
// From (node GUID, port), each [out] -> {port GUID}[in] lid range, To.
func compareWithIbtracert(ours trace.JSONResult, out string) error {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 {
		return fmt.Errorf("ibtracert printed %q", out)
	}
	h := ours.Hops
	m := fromRe.FindStringSubmatch(lines[0])
	if m == nil {
		return fmt.Errorf("ibtracert From line %q", lines[0])
	}
	fromPort := h[0].OutPort
	if h[0].NodeType == "switch" {
		fromPort = 0
	}
	if hexGUID(m[2]) != h[0].NodeGUID || m[3] != strconv.Itoa(int(fromPort)) {
		return fmt.Errorf("From: ibtracert %s port %s, ours %s port %d", m[2], m[3], h[0].NodeGUID, fromPort)
	}
	route := lines[1 : len(lines)-1]
	if len(route) != ours.PathHops {
		return fmt.Errorf("ibtracert shows %d hops, ours %d", len(route), ours.PathHops)
	}
	for k, line := range route {
		m := hopRe.FindStringSubmatch(line)
		if m == nil {
			return fmt.Errorf("ibtracert route line %q", line)
		}
		prev, cur := h[k], h[k+1]
		hi := uint32(cur.LID) + uint32(1)<<cur.LMC - 1
		if m[1] != strconv.Itoa(int(prev.OutPort)) || hexGUID(m[3]) != cur.PortGUID || m[4] != strconv.Itoa(int(cur.InPort)) ||
			m[5] != strconv.Itoa(int(cur.LID)) || m[6] != strconv.Itoa(int(hi)) || m[2] != cur.NodeType {
			return fmt.Errorf("hop %d: ibtracert %q, ours [%d] -> %s {%s}[%d] lid %d-%d", k+1, line, prev.OutPort,
				cur.NodeType, cur.PortGUID, cur.InPort, cur.LID, hi)
		}
	}
	m = toRe.FindStringSubmatch(lines[len(lines)-1])
	last := h[len(h)-1]
	toPort := last.InPort
	if last.NodeType == "switch" {
		toPort = 0
	}
	if m == nil || hexGUID(m[2]) != last.NodeGUID || m[3] != strconv.Itoa(int(toPort)) {
		return fmt.Errorf("To: ibtracert %q, ours %s port %d", lines[len(lines)-1], last.NodeGUID, toPort)
	}
	return nil
}

// ibtracertDiff runs stock ibtracert on node src from srcLID to dlid and
// returns how ours differs from its route (nil: not at all).
func ibtracertDiff(fab *ibsimtest.Fabric, src string, srcLID, dlid uint16, ours trace.JSONResult) error {
	want, err := fab.Tool(src, "ibtracert", strconv.Itoa(int(srcLID)), strconv.Itoa(int(dlid)))
	if err != nil {
		return err
	}
	return compareWithIbtracert(ours, want)
}

// equalIbtracert compares every result of rs, four at once, with stock
// ibtracert's route from srcLID to its DLID, run on node src; a
// difference is a test error. It returns how many are equal.
func equalIbtracert(t *testing.T, fab *ibsimtest.Fabric, src string, srcLID uint16, rs []trace.JSONResult) int {
	var equal atomic.Int64
	each(len(rs), 4, func(i int) {
		if err := ibtracertDiff(fab, src, srcLID, rs[i].DLID, rs[i]); err != nil {
			t.Errorf("from %s to LID %d: %v", src, rs[i].DLID, err)
			return
		}
		equal.Add(1)
	})
	return int(equal.Load())
}

// TestHopSequencesEqualIbtracert: for every destination LID, from two
// sources per topology, our JSON hop sequence equals ibtracert's.
func TestHopSequencesEqualIbtracert(t *testing.T) {
	ibsimtest.Require(t)
	for _, tc := range []struct {
		file    string
		sources []string
	}{
		{"two-switch.net", []string{"host1", "host5"}},
		{"chain-5.net", []string{"hostA", "hostC"}},
		{"fattree-128.net", []string{"H0-0", "H11-6"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			fab := ibsimtest.Start(t, filepath.Join(topoDir, tc.file), ibsimtest.Options{})
			lids := allLIDs(t, fab, tc.sources[0])
			for _, src := range tc.sources {
				args := []string{"--format=json", "--no-validate"}
				for lid := range lids {
					args = append(args, "-l", strconv.Itoa(int(lid)))
				}
				out, errOut, code := runCLI(t, fab, src, args...)
				if code != 0 {
					t.Fatalf("ibtracer exit %d: %s", code, errOut)
				}
				var results []trace.JSONResult
				if err := json.Unmarshal([]byte(out), &results); err != nil {
					t.Fatal(err)
				}
				if len(results) != len(lids) || len(results[0].Hops) == 0 {
					t.Fatalf("%d results for %d LIDs", len(results), len(lids))
				}
				// The port ibtracer attached at (a multi-port CA has several LIDs).
				srcLID := results[0].Hops[0].LID
				var others []trace.JSONResult
				for _, r := range results {
					if r.DLID != srcLID {
						others = append(others, r)
					}
				}
				compared := equalIbtracert(t, fab, src, srcLID, others)
				t.Logf("from %s (LID %d): %d paths equal to ibtracert's", src, srcLID, compared)
			}
		})
	}
}

// startAgents runs our agent in this process on nodes, each its own ibsim
// client connected with the issm flag.
func startAgents(t *testing.T, fab *ibsimtest.Fabric, ping bool, nodes ...string) map[string]*ibmad.Engine {
	t.Helper()
	out := map[string]*ibmad.Engine{}
	for _, n := range nodes {
		tr := fab.Dial(n, true)
		e := ibmad.NewEngine(tr, ibmad.Options{})
		if _, err := agent.New(e, agent.Config{Ping: ping, Hostname: "agent-" + n}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		out[n] = e
	}
	return out
}

// TestAgentsValidateOnIbsim: with our agent on several CAs and a switch,
// every agent hop validates by the agent (the switch cannot tell its
// ingress port on ibsim), nothing reports status 7, and in auto mode (the
// default) every other node is asked its SMA: a CA validates, a switch
// is ingress_unknown (ibsim's LocalPortNum 0; docs/protocol.md,
// "Validation by the SMA").
func TestAgentsValidateOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-128.net"), ibsimtest.Options{})
	withAgent := []string{"H0-1", "H3-2", "H7-7", "H12-0", "H15-4", "H9-5"}
	startAgents(t, fab, false, append(withAgent, "L5")...)
	agentSet := map[string]bool{}
	for _, n := range withAgent {
		agentSet[n] = true
	}
	lids := allLIDs(t, fab, "H0-0")
	args := []string{"--format=json"}
	for lid, desc := range lids {
		if strings.HasPrefix(desc, "H") && desc != "H0-0" {
			args = append(args, "-l", strconv.Itoa(int(lid)))
		}
	}
	args = append(args, "-l", "3") // and a switch LID
	out, errOut, code := runCLI(t, fab, "H0-0", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var results []trace.JSONResult
	if err := json.Unmarshal([]byte(out), &results); err != nil {
		t.Fatal(err)
	}
	validated, switchUnknown, bySMA := 0, 0, 0
	for _, r := range results {
		if r.Status != "ok" {
			t.Fatalf("%s: %s %s", r.Destination, r.Status, r.Error)
		}
		for _, h := range r.Hops[1:] {
			switch {
			case h.AgentStatus == "mismatch":
				t.Fatalf("%s: hop %d %s reports status 7", r.Destination, h.Hop, h.NodeDesc)
			case agentSet[h.NodeDesc]:
				if h.AgentStatus != "validated" || h.ValidatedBy != "agent" || h.ActualInPort == nil || *h.ActualInPort != h.InPort {
					t.Fatalf("%s: agent hop %s: %s", r.Destination, h.NodeDesc, h.AgentStatus)
				}
				validated++
			case h.NodeDesc == "L5":
				if h.AgentStatus != "ingress_unknown" || h.ValidatedBy != "agent" {
					t.Fatalf("switch agent L5: %s, want ingress_unknown", h.AgentStatus)
				}
				switchUnknown++
			default:
				// ibsim has no kernel to answer "no such class" (0x000C) at a
				// node without a client: the vendor MAD is lost, and the SMA
				// is asked.
				want := "validated"
				if h.NodeType == "switch" {
					want = "ingress_unknown"
				}
				if h.AgentStatus != want || h.ValidatedBy != "sma" {
					t.Fatalf("%s: hop %s without agent: %s by %q, want %s by sma", r.Destination, h.NodeDesc, h.AgentStatus, h.ValidatedBy, want)
				}
				bySMA++
			}
		}
	}
	if validated != len(withAgent) || switchUnknown == 0 || bySMA == 0 {
		t.Fatalf("%d agent hops validated (want %d), %d switch-agent hops", validated, len(withAgent), switchUnknown)
	}
	t.Logf("%d traces: %d agent hops validated, %d via the switch agent (ingress unknown), %d by the SMA", len(results), validated, switchUnknown, bySMA)
}

var pongRe = regexp.MustCompile(`Pong from (\S+) \(Lid (\d+)\): time [0-9.]+ ms`)

// TestStockIbpingGetsReplies: infiniband-diags' ibping gets answers from
// our agent on ibsim.
func TestStockIbpingGetsReplies(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "chain-5.net"), ibsimtest.Options{})
	startAgents(t, fab, true, "hostB")
	lids := allLIDs(t, fab, "hostA")
	var lid uint16
	for l, d := range lids {
		if d == "hostB" {
			lid = l
		}
	}
	out, err := fab.Tool("hostA", "ibping", "-c", "3", strconv.Itoa(int(lid)))
	if err != nil {
		t.Fatal(err)
	}
	pongs := pongRe.FindAllStringSubmatch(out, -1)
	if len(pongs) != 3 || pongs[0][1] != "agent-hostB" || pongs[0][2] != strconv.Itoa(int(lid)) ||
		!strings.Contains(out, "3 packets transmitted, 3 received, 0% packet loss") {
		t.Fatalf("ibping output:\n%s", out)
	}
}

// TestFailuresOnIbsim: the documented text and exit status for an
// unreachable LID and a missing simulator.
func TestFailuresOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "chain-5.net"), ibsimtest.Options{})
	out, _, code := runCLI(t, fab, "hostA", "-t", "100", "-r", "1", "-l", "500")
	if code != exitUnreachable || !strings.Contains(out, "lid 500: unreachable: no route to LID 500") {
		t.Fatalf("exit %d: %s", code, out)
	}
	out, _, code = runCLI(t, fab, "hostA", "-t", "100", "-r", "1", "-l", "500", "--format=json")
	var rs []trace.JSONResult
	if err := json.Unmarshal([]byte(out), &rs); err != nil || code != exitUnreachable || len(rs) != 1 ||
		rs[0].Status != "unreachable" || rs[0].Reason != "no_route" || !strings.Contains(rs[0].Error, "no route to LID 500") ||
		len(rs[0].Hops) != 2 || rs[0].MADs == 0 {
		t.Fatalf("JSON failure: exit %d %v %+v", code, err, rs)
	}
	gone := &ibsimtest.Fabric{SockName: "ibt-no-such-sim"}
	_, errOut, code := runCLI(t, gone, "hostA", "-l", "1")
	if code != exitDevice || !strings.Contains(errOut, "no simulator answers at @ibt-no-such-sim:ctl") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
