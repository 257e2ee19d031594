package collector

import (
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// smaResult is an ok trace source → leaf (no agent: its SMA validated the
// ingress port) → spine (its SMA answered LocalPortNum 0) → db (the
// destination; by gets its verdict), with distinct RTTs per hop.
func smaResult(by trace.Validator) *trace.Result {
	hop := func(i int, guid ibmad.GUID, typ ibmad.NodeType, st trace.AgentStatus, v trace.Validator, rtt, vrtt time.Duration) trace.Hop {
		return trace.Hop{Hop: i, NodeGUID: guid, PortGUID: guid + 1, NodeType: typ, NodeDesc: "n", LID: uint16(i + 1),
			InPort: 1, OutPort: 2, Agent: st, ValidatedBy: v, RTT: rtt, AgentRTT: vrtt}
	}
	return &trace.Result{Status: trace.StatusOK, Start: time.Unix(1800000000, 0), Duration: time.Millisecond, MADs: 9, DLID: 4,
		Hops: []trace.Hop{hop(0, 0x10, ibmad.NodeTypeCA, trace.AgentSource, "", time.Microsecond, 0),
			hop(1, 0x20, ibmad.NodeTypeSwitch, trace.AgentValidated, trace.BySMA, 2*time.Microsecond, 30*time.Microsecond),
			hop(2, 0x30, ibmad.NodeTypeSwitch, trace.AgentIngressUnknown, trace.BySMA, 3*time.Microsecond, 40*time.Microsecond),
			hop(3, 0x40, ibmad.NodeTypeCA, trace.AgentValidated, by, 4*time.Microsecond, 50*time.Microsecond)}}
}

// TestHopVerdictSaysWho: the per-hop verdict series names the verdict and
// who gave it (agent, sma; none when nobody was asked), and so does the
// per-hop RTT, whose value is the validator's answer time.
func TestHopVerdictSaysWho(t *testing.T) {
	e := New(log.NewNopLogger(), "seed")
	defer e.Stop()
	e.Apply(mustConfig(t, "interval: 1h\ndestinations:\n  - name: db\n    lid: 4\n"))
	r := smaResult(trace.ByAgent)
	r.Hops = append(r.Hops[:3:3], r.Hops[3])
	r.Hops[2].Agent, r.Hops[2].ValidatedBy, r.Hops[2].AgentRTT = trace.AgentNotAsked, "", 0
	e.dests.get("db").record(r)
	want := `
# HELP ibtracer_hop_verdict The verdict on each hop of the last trace and who gave it (validated_by: agent, sma, none): one series per hop.
# TYPE ibtracer_hop_verdict gauge
ibtracer_hop_verdict{dest="db",hop="1",validated_by="sma",verdict="validated"} 1
ibtracer_hop_verdict{dest="db",hop="2",validated_by="none",verdict="not_asked"} 1
ibtracer_hop_verdict{dest="db",hop="3",validated_by="agent",verdict="validated"} 1
# HELP ibtracer_hop_rtt_seconds Round-trip time of the last MAD to each hop: the validator's answer (validated_by agent or sma), else the walk's directed-route SMP (none).
# TYPE ibtracer_hop_rtt_seconds gauge
ibtracer_hop_rtt_seconds{dest="db",hop="1",validated_by="sma"} 3e-05
ibtracer_hop_rtt_seconds{dest="db",hop="2",validated_by="none"} 3e-06
ibtracer_hop_rtt_seconds{dest="db",hop="3",validated_by="agent"} 5e-05
`
	if err := testutil.CollectAndCompare(e, strings.NewReader(want), "ibtracer_hop_verdict", "ibtracer_hop_rtt_seconds",
		"ibtracer_hop_agent_status"); err != nil {
		t.Fatal(err)
	}
}

// TestLatencyOnlyFromTheAgent: the end-to-end latency (the histogram and
// last_latency_seconds) is the destination's own agent's answer time; an
// SMA's answer crosses VL15 and the node's management CPU, not the data
// path (docs/metrics.md, "Latency"), so a destination validated by its SMA
// leaves both as they were.
func TestLatencyOnlyFromTheAgent(t *testing.T) {
	e := New(log.NewNopLogger(), "seed")
	defer e.Stop()
	e.Apply(mustConfig(t, "interval: 1h\ndestinations:\n  - name: db\n    lid: 4\n"))
	s := e.dests.get("db")
	s.record(smaResult(trace.BySMA))
	if got := metricOf(t, e, "ibtracer_last_latency_seconds").GetGauge().GetValue(); got != 0 {
		t.Errorf("SMA-validated destination: last_latency_seconds %v, want 0", got)
	}
	if n := metricOf(t, e, "ibtracer_latency_seconds").GetHistogram().GetSampleCount(); n != 0 {
		t.Errorf("SMA-validated destination: %d latency observations, want 0", n)
	}
	s.record(smaResult(trace.ByAgent))
	if got := metricOf(t, e, "ibtracer_last_latency_seconds").GetGauge().GetValue(); got != 50e-6 {
		t.Errorf("agent-validated destination: last_latency_seconds %v, want 5e-05", got)
	}
	if n := metricOf(t, e, "ibtracer_latency_seconds").GetHistogram().GetSampleCount(); n != 1 {
		t.Errorf("agent-validated destination: %d latency observations, want 1", n)
	}
}

// metricOf is the one metric of family name that e exports.
func metricOf(t *testing.T, e *Exporter, name string) *dto.Metric {
	t.Helper()
	mfs := families(t, e)
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.Metric) == 1 {
			return mf.Metric[0]
		}
	}
	t.Fatalf("no single %s", name)
	return nil
}

// TestSMAMismatchCounts: a mismatch found by a switch's SMA is a port
// mismatch like the agent's (status 7): it counts in path_mismatched_hops
// and port_mismatches_total, which IBTracerPortMismatch reads; and a hop
// its SMA validated counts as validated, not as unsupported.
func TestSMAMismatchCounts(t *testing.T) {
	e := New(log.NewNopLogger(), "seed")
	defer e.Stop()
	e.Apply(mustConfig(t, "interval: 1h\ndestinations:\n  - name: db\n    lid: 4\n"))
	r := smaResult(trace.BySMA)
	r.Status = trace.StatusMismatch
	r.Hops[1].Agent, r.Hops[1].ExpectedInPort, r.Hops[1].ActualInPort = trace.AgentMismatch, 1, 3
	e.dests.get("db").record(r)
	for name, want := range map[string]float64{"ibtracer_path_mismatched_hops": 1, "ibtracer_port_mismatches_total": 1,
		"ibtracer_path_validated_hops": 1, "ibtracer_path_unsupported_hops": 0, "ibtracer_unsupported_hops_total": 0} {
		m := metricOf(t, e, name)
		if got := m.GetGauge().GetValue() + m.GetCounter().GetValue(); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

// families gathers every metric family e exports.
func families(t *testing.T, e *Exporter) []*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(e)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}
