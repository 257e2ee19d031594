package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim/simtest"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// remoteGID is host R-H<h> of the subnet --sim.remote-subnet adds.
func remoteGID(h int) string {
	return ibmad.MakeGID(sim.RemoteSubnetPrefix, simtest.RemoteHostGUID(h)).String()
}

// subnetCLI runs the command on the demo fabric with --sim.remote-subnet.
func subnetCLI(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(append([]string{"--ib.transport=sim", "--sim.remote-subnet", "-t", "50"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

// TestCLIPathLeavesSubnet: `ibtracer -g` to a host of the subnet behind
// the router ends at the router hop with left_subnet and exit status 0;
// the JSON and -v report the remote part the remote SA gave. Only our
// simulator: no independent peer has routers here.
func TestCLIPathLeavesSubnet(t *testing.T) {
	remote, err := sim.New(sim.RemoteSubnet("R0"), sim.Options{GIDPrefix: sim.RemoteSubnetPrefix, SMNode: "R-H0"})
	if err != nil {
		t.Fatal(err)
	}
	wantDLID, _ := remote.LIDOf("R-H2", 1)
	out, errOut, code := subnetCLI("-g", remoteGID(2), "--format=json")
	var rs []trace.JSONResult
	if err := json.Unmarshal([]byte(out), &rs); err != nil || code != 0 || len(rs) != 1 {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, errOut)
	}
	r := rs[0]
	last := r.Hops[len(r.Hops)-1]
	if r.Status != "left_subnet" || last.NodeType != "router" || last.NodeGUID != sim.RouterGUID.String() || last.InPort != 1 || last.OutPort != 2 {
		t.Fatalf("status %s, last hop %+v: want left_subnet at the router, in port 1, out port 2", r.Status, last)
	}
	b := r.Beyond
	if b == nil || !b.RemoteSA || b.RemoteDLID != wantDLID || b.NodeDesc != "R-H2" || b.RouterGUID != sim.RouterGUID.String() ||
		b.SubnetPrefix != "fec0:0:0:b::/64" || b.HopLimit <= 1 {
		t.Fatalf("beyond %+v, want R-H2 at LID %d", b, wantDLID)
	}
	out, _, code = subnetCLI("-g", remoteGID(2), "-v")
	for _, want := range []string{"left the subnet at router \"R0 router\"", "Leaves the subnet at router {" + sim.RouterGUID.String() + "} port 1",
		"router port [2]", "\"R-H2\""} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("-v: exit %d, %q missing:\n%s", code, want, out)
		}
	}
}

// TestCLIRouterDoesNotForward: the router forwards nothing: exit status
// 4 (unreachable), and the message names the router and what it does not do.
func TestCLIRouterDoesNotForward(t *testing.T) {
	out, errOut, code := subnetCLI("--sim.router-down", "-g", remoteGID(0))
	if code != exitUnreachable || !strings.Contains(out+errOut, "the router does not forward to that subnet") ||
		!strings.Contains(out+errOut, "router \"R0 router\" ("+sim.RouterGUID.String()+") port 1") {
		t.Fatalf("exit %d, want %d:\n%s%s", code, exitUnreachable, out, errOut)
	}
}

// TestViaCountsLeftSubnetAsWalked: a trace that left the subnet walked
// its whole local path, so --via can tell whether it crosses a link: one
// that does not cross is not "undetermined", and one that does is listed
// without a failure note.
func TestViaCountsLeftSubnetAsWalked(t *testing.T) {
	f, err := sim.New(ibopen.DemoTopology(), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	off := fmt.Sprintf("%s:1", f.Node("H1-0").GUID) // a host link no path from H0-0 to the router crosses
	out, errOut, code := subnetCLI("-g", remoteGID(2), "--via", off, "--format=json")
	var doc jsonVia
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if doc.Traced != 1 || len(doc.Crossing) != 0 || len(doc.Undetermined) != 0 {
		t.Fatalf("--via %s: traced %d, crossing %d, undetermined %d; want 1, 0, 0", off, doc.Traced, len(doc.Crossing), len(doc.Undetermined))
	}
	on := fmt.Sprintf("%s:1", f.Node("H0-0").GUID) // the source's own link
	out, errOut, code = subnetCLI("-g", remoteGID(2), "--via", on)
	if code != 0 || !strings.Contains(out, "1 of 1 traced destinations cross it") || strings.Contains(out, "(trace left_subnet") {
		t.Fatalf("--via %s: exit %d\n%s%s", on, code, out, errOut)
	}
}
