package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// simLIDOf returns the LID the built-in sim gives node's port on topo
// (the same fabric --ib.transport=sim builds from the file).
func simLIDOf(t *testing.T, topo, node string, port int) uint16 {
	t.Helper()
	st, err := sim.LoadTopology(topo)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(st, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lid, err := f.LIDOf(node, port)
	if err != nil {
		t.Fatal(err)
	}
	return lid
}

// TestNodePortOnSim: --node NAME traces a two-port node's first port and
// says so; --port N names the port; --port without --node, out of range,
// or not one per --node is bad usage.
func TestNodePortOnSim(t *testing.T) {
	topo := filepath.Join(topoDir, "two-switch.net")
	base := []string{"--ib.transport=sim", "--sim.topology=" + topo, "--sim.node=host1", "--no-validate"}
	cli := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := run(append(append([]string(nil), base...), args...), &out, &errb)
		return out.String(), errb.String(), code
	}
	for _, c := range []struct {
		args  []string
		ports []uint8
	}{
		{[]string{"--node", "host5"}, []uint8{1}},
		{[]string{"--node", "host5", "--port", "2"}, []uint8{2}},
		{[]string{"-N", "host5", "-N", "host4", "--port", "2", "--port", "1"}, []uint8{2, 1}},
	} {
		out, errOut, code := cli(append(c.args, "--format=json")...)
		var rs []trace.JSONResult
		if err := json.Unmarshal([]byte(out), &rs); err != nil || code != 0 || len(rs) != len(c.ports) {
			t.Fatalf("%v: exit %d, %v\n%s%s", c.args, code, err, out, errOut)
		}
		for i, r := range rs {
			node := strings.Trim(strings.Fields(r.Address)[1], `"`)
			if want := simLIDOf(t, topo, node, int(c.ports[i])); r.Port != c.ports[i] || r.DLID != want {
				t.Errorf("%v: %s: port %d lid %d, want port %d lid %d", c.args, r.Address, r.Port, r.DLID, c.ports[i], want)
			}
		}
	}
	out, _, code := cli("--node", "host5")
	if want := simLIDOf(t, topo, "host5", 1); code != 0 || !strings.Contains(out, `node "host5" -> lid `) ||
		!strings.Contains(out, " (port 1): ok") || !strings.Contains(out, fmt.Sprintf("lid %d (port 1)", want)) {
		t.Errorf("text output does not name the port: exit %d %q", code, out)
	}
	out, _, code = cli("--node", "host5", "--port", "3")
	if code != exitResolve || !strings.Contains(out, "no port 3") {
		t.Errorf("--port 3 of a two-port node: exit %d %q", code, out)
	}
	for _, args := range [][]string{
		{"-l", "3", "--port", "1"},
		{"--node", "host5", "--port", "0"},
		{"--node", "host5", "--port", "255"},
		{"--node", "host5", "--node", "host4", "--node", "host3", "--port", "1", "--port", "2"},
	} {
		_, errOut, code := cli(args...)
		if code != exitUsage || !strings.Contains(errOut, "--port") {
			t.Errorf("%v: exit %d %q, want bad usage naming --port", args, code, errOut)
		}
	}
}

// ibnetdiscoverCAPortLID returns the LID stock ibnetdiscover reports for
// port of the CA whose description is desc.
func ibnetdiscoverCAPortLID(t *testing.T, out, desc string, port int) uint16 {
	t.Helper()
	header := regexp.MustCompile(`^Ca\s+\d+\s+"[^"]*"\s+#\s+"(.*)"`)
	portRe := regexp.MustCompile(`^\[(\d+)\]\([0-9a-f]+\)\s.*#\s+lid (\d+) lmc \d+ `)
	in := false
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if m := header.FindStringSubmatch(line); m != nil {
			in = m[1] == desc
			continue
		}
		if line == "" {
			in = false
		}
		if m := portRe.FindStringSubmatch(line); in && m != nil && m[1] == strconv.Itoa(port) {
			v, _ := strconv.ParseUint(m[2], 10, 16)
			return uint16(v)
		}
	}
	t.Fatalf("ibnetdiscover shows no port %d of %q:\n%s", port, desc, out)
	return 0
}

// TestNodePortOnIbsim: on ibsim with OpenSM's SA, the built ibtracer
// traces a two-port node at its first port by default and at the port
// --port names, at the LIDs ibnetdiscover reports.
func TestNodePortOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "two-switch.net"), ibsimtest.Options{KeepSM: true, SMHost: true})
	disc, err := fab.Tool("host1", "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		port int
	}{
		{[]string{"--node", "host5"}, 1},
		{[]string{"--node", "host5", "--port", "2"}, 2},
	} {
		out, errOut, code := runCLI(t, fab, "host1", append(c.args, "--no-validate", "--format=json")...)
		var rs []trace.JSONResult
		if err := json.Unmarshal([]byte(out), &rs); err != nil || code != 0 || len(rs) != 1 {
			t.Fatalf("%v: exit %d, %v\n%s%s", c.args, code, err, out, errOut)
		}
		if want := ibnetdiscoverCAPortLID(t, disc, "host5", c.port); rs[0].DLID != want || int(rs[0].Port) != c.port {
			t.Errorf("%v: lid %d port %d, ibnetdiscover: port %d lid %d", c.args, rs[0].DLID, rs[0].Port, c.port, want)
		}
	}
}
