package trace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

var (
	prSLRe  = regexp.MustCompile(`(?m)^\s*sl\.*0x([0-9a-fA-F]+)$`)
	prHopRe = regexp.MustCompile(`(?m)^\s*hop_flow_raw\.*0x([0-9a-fA-F]+)$`)
	prTCRe  = regexp.MustCompile(`(?m)^\s*tclass\.*0x([0-9a-fA-F]+)$`)
)

// TestSLAndGRHOnIbsim: on ibsim + OpenSM with a QoS policy that gives every
// path SL 3, a GUID destination's validation MADs use the SL the stock
// `saquery --src-to-dst` prints for the same path, a LID destination's
// the default, --sl wins; OpenSM's in-subnet PathRecords have hop limit 0,
// so no GRH, as saquery's hop_flow_raw says. What ibsim carries is tested
// below: neither the SL nor the GRH (docs/protocol.md, "SL and GRH").
func TestSLAndGRHOnIbsim(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "qos-policy.conf")
	if err := os.WriteFile(policy, []byte("qos-ulps\n    default : 3\nend-qos-ulps\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-mini.net"),
		ibsimtest.Options{KeepSM: true, SMHost: true, SMArgs: []string{"-Q", "-Y", policy}})
	e := ibmad.NewEngine(fab.Dial("H0-0", false), ibmad.Options{Timeout: 2 * time.Second})
	t.Cleanup(func() { e.Close() })
	dp := runAgent(t, fab.Dial("H1-2", true))
	sp, err := e.Port()
	if err != nil {
		t.Fatal(err)
	}
	out, err := fab.Tool("H0-0", "saquery", "--src-to-dst", fmt.Sprintf("%d:%d", sp.LID, dp.LID))
	if err != nil {
		t.Fatalf("saquery: %v\n%s", err, out)
	}
	m, h, c := prSLRe.FindStringSubmatch(out), prHopRe.FindStringSubmatch(out), prTCRe.FindStringSubmatch(out)
	if m == nil || h == nil || c == nil {
		t.Fatalf("saquery printed no sl, hop_flow_raw or tclass:\n%s", out)
	}
	stockSL, _ := strconv.ParseUint(m[1], 16, 8)
	raw, _ := strconv.ParseUint(h[1], 16, 32)
	stockHop := uint8(raw)
	if stockSL == 0 {
		t.Fatalf("OpenSM's QoS policy gave SL 0: the test would prove nothing\n%s", out)
	}

	ctx := context.Background()
	for _, tc := range []struct {
		name string
		d    Destination
		o    Options
		sl   uint8
		from SLFrom
	}{
		{"guid", Destination{GUID: dp.PortGUID}, Options{}, uint8(stockSL), SLFromPathRecord},
		{"node", Destination{Node: "H1-2"}, Options{}, uint8(stockSL), SLFromPathRecord},
		{"lid", Destination{LID: dp.LID}, Options{}, 0, SLFromDefault},
		{"guid, --sl 1", Destination{GUID: dp.PortGUID}, Options{SL: FixedSL(1)}, 1, SLFromOption},
	} {
		o := tc.o
		o.Validate, o.Timeout, o.Retries = ValidateAgent, 2*time.Second, new(1)
		r := New(e, o).Trace(ctx, tc.d)
		if r.Status != StatusOK || r.Addressing == nil {
			t.Fatalf("%s: %s %v", tc.name, r.Status, r.Err)
		}
		a := r.Addressing
		if a.SL != tc.sl || a.SLFrom != tc.from || a.GRH != (stockHop > 1) {
			t.Errorf("%s: %+v, want SL %d from %s, GRH %v (saquery's hop limit %d)", tc.name, *a, tc.sl, tc.from, stockHop > 1, stockHop)
		}
		if last := r.Hops[len(r.Hops)-1]; last.Agent != AgentValidated {
			t.Errorf("%s: the destination's agent: %s", tc.name, last.Agent)
		}
	}
}

// TestIbsimCarriesNoSLOrGRH: what ibsim does with a MAD's SL and GRH. Its
// socket protocol (struct sim_request: dlid, slid, dqp, sqp, status,
// length, mad) has no field for either, and libumad2sim clears sl and
// grh_present on every MAD it hands a client. So a vendor MAD sent with SL
// 5 and a GRH whose DGID is no port's reaches the agent with SL 0 and no
// GRH, and is answered: on ibsim neither is checked by a real peer.
func TestIbsimCarriesNoSLOrGRH(t *testing.T) {
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-mini.net"), ibsimtest.Options{})
	e := ibmad.NewEngine(fab.Dial("H0-0", false), ibmad.Options{Timeout: 2 * time.Second})
	t.Cleanup(func() { e.Close() })
	rec := &recorder{Transport: fab.Dial("H1-2", true)}
	dp := runAgent(t, rec)
	a := Addressing{SL: 5, GRH: true, DGID: ibmad.MakeGID(0xfec0_0000_0000_0001, 0xdead), HopLimit: 9, TClass: 7, FlowLabel: 0xabcde}
	req := &ibmad.Request{Addr: a.GMPAddress(dp.LID, true), Timeout: 2 * time.Second}
	_ = ibmad.NewVendorGet(ibmad.ClassIBTracer, ibmad.OUIOpenIB, ibmad.AttrClassPortInfo, 0).MarshalTo(req.MAD[:])
	resp := &ibmad.Response{}
	if err := e.Do(context.Background(), req, resp); err != nil {
		t.Fatalf("the vendor MAD with a GRH: %v", err)
	}
	if st := resp.MAD.Status(); st != 0 {
		t.Fatalf("status %s", st)
	}
	got := rec.addrs()
	if len(got) != 1 {
		t.Fatalf("the agent got %d requests", len(got))
	}
	if got[0].SL != 0 || got[0].GRHPresent {
		t.Fatalf("ibsim carried SL %d, GRH %v: the docs say it carries neither", got[0].SL, got[0].GRHPresent)
	}
}

// runAgent runs our vendor agent over tp until the test ends and returns
// the port it answers on.
func runAgent(t *testing.T, tp ibmad.Transport) ibmad.PortAttributes {
	t.Helper()
	dst := ibmad.NewEngine(tp, ibmad.Options{Timeout: 2 * time.Second})
	t.Cleanup(func() { dst.Close() })
	if _, err := agent.New(dst, agent.Config{}); err != nil {
		t.Fatal(err)
	}
	dp, err := dst.Port()
	if err != nil {
		t.Fatal(err)
	}
	return dp
}
