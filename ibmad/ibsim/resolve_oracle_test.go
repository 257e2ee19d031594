package ibsim_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// netPort is one CA port as ibnetdiscover reports it.
type netPort struct {
	desc string
	num  uint8
	guid ibmad.GUID
	lid  uint16
}

var (
	caHeaderRe = regexp.MustCompile(`^Ca\s+\d+\s+"[^"]*"\s+#\s+"(.*)"`)
	caPortRe   = regexp.MustCompile(`^\[(\d+)\]\(([0-9a-f]+)\)\s.*#\s+lid (\d+) lmc \d+ `)
)

// parseIbnetdiscover returns every CA port of ibnetdiscover's output.
func parseIbnetdiscover(out string) []netPort {
	var ports []netPort
	desc := ""
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if m := caHeaderRe.FindStringSubmatch(line); m != nil {
			desc = m[1]
			continue
		}
		if line == "" || strings.HasPrefix(line, "Switch") {
			desc = ""
			continue
		}
		if m := caPortRe.FindStringSubmatch(line); m != nil && desc != "" {
			num, _ := strconv.ParseUint(m[1], 10, 8)
			guid, _ := strconv.ParseUint(m[2], 16, 64)
			lid, _ := strconv.ParseUint(m[3], 10, 16)
			ports = append(ports, netPort{desc: desc, num: uint8(num), guid: ibmad.GUID(guid), lid: uint16(lid)})
		}
	}
	return ports
}

// TestOracleResolveEqualsIbnetdiscover: destinations named by port GUID,
// GID and node description, resolved by our client through a running
// OpenSM's SA, get the LID stock ibnetdiscover reports for that port.
func TestOracleResolveEqualsIbnetdiscover(t *testing.T) {
	ibsimtest.Require(t)
	const at = "host1"
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "two-switch.net"), ibsimtest.Options{KeepSM: true})
	out, err := fab.Tool(at, "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	ports := parseIbnetdiscover(out)
	perNode := map[string][]netPort{}
	for _, p := range ports {
		perNode[p.desc] = append(perNode[p.desc], p)
	}
	if len(ports) < 6 || len(perNode["host5"]) != 2 {
		t.Fatalf("ibnetdiscover: want 6 CA ports, host5 with 2; parsed %+v from\n%s", ports, out)
	}

	tr := fab.Dial(at, false)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 2 * time.Second})
	defer e.Close()
	local, err := tr.Port()
	if err != nil {
		t.Fatal(err)
	}
	tracer := trace.New(e, trace.Options{Timeout: 2 * time.Second, NoValidate: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	check := func(d trace.Destination, want netPort) {
		t.Helper()
		r := tracer.Trace(ctx, d)
		if r.DLID != want.lid {
			t.Errorf("%s: DLID %d (%s %v), ibnetdiscover: %q port %d lid %d", d, r.DLID, r.Status, r.Err, want.desc, want.num, want.lid)
		}
	}
	for _, p := range ports {
		check(trace.Destination{GUID: p.guid}, p)
		check(trace.Destination{GID: ibmad.MakeGID(local.GIDPrefix, p.guid)}, p)
	}
	for desc, ps := range perNode {
		if len(ps) == 1 {
			check(trace.Destination{Node: desc}, ps[0])
		}
	}
}
