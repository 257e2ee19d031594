package e2e

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// The fault matrix's flood scenario (faults_test.go runs it).

// flood: the exporter's hosted agent is flooded from two other ibsim
// clients: valid Gets twenty times the rate limit from host3, and from
// host5 a mix of Sets, unknown attributes, hop counts 0/64/255, wrong base
// and class versions, random MADs and responses with unknown TIDs. The
// exporter's own traces keep succeeding, every MAD that reaches it is
// counted by reason, and CPU and memory stay bounded.
func (m *matrix) flood(t *testing.T) {
	p := m.p
	dst := m.lids["host1"]
	_, before := p.get("/metrics")
	t0 := time.Now()

	var tid uint64 = 0x0f10_0000_0000
	send := func(tr ibmad.Transport, pk *ibmad.Packet) {
		tid++
		pk.MAD.SetTID(tid)
		if err := tr.Send(pk); err != nil {
			t.Fatalf("flooder send: %v", err)
		}
	}
	// 2,000 valid Gets a second for 1.5 s, in bursts of 100.
	const nGets, burst = 3000, 100
	flooder := m.fab.Dial("host3", false)
	drain(flooder)
	tick := time.NewTicker(50 * time.Millisecond)
	for i := 0; i < nGets; i += burst {
		for range burst {
			send(flooder, sourceRoute(dst, ibmad.MethodGet, ibmad.AttrSourceRoute, 1))
		}
		<-tick.C
	}
	tick.Stop()
	floodTime := time.Since(t0)

	mix := m.fab.Dial("host5", false)
	replies := drain(mix)
	want := map[string]int{}
	add := func(reason string, pk *ibmad.Packet) {
		want[reason]++
		send(mix, pk)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	const k = 10
	for range k {
		add("set", sourceRoute(dst, ibmad.MethodSet, ibmad.AttrSourceRoute, 1))
		add("unknown_attr", sourceRoute(dst, ibmad.MethodGet, 0x7777, 1))
		add("hop0", sourceRoute(dst, ibmad.MethodGet, ibmad.AttrSourceRoute, 0))
		add("hop64", sourceRoute(dst, ibmad.MethodGet, ibmad.AttrSourceRoute, 64))
		add("hop255", sourceRoute(dst, ibmad.MethodGet, ibmad.AttrSourceRoute, 255))
		pk := sourceRoute(dst, ibmad.MethodGet, ibmad.AttrSourceRoute, 1)
		pk.MAD[0] = 2 // base version
		add("base_version", pk)
		pk = sourceRoute(dst, ibmad.MethodGet, ibmad.AttrSourceRoute, 1)
		pk.MAD[2] = 2 // class version
		add("class_version", pk)
		add("random", randomMAD(dst, rng))
	}
	// Responses nobody asked for. ibsim hands a response only to a client
	// whose id is in the top 16 bits of the TID (ibmad/ibsim/doc.go), so
	// one per possible client id, some of which reach the exporter.
	for id := range uint64(ibsimMaxClients) {
		pk := sourceRoute(dst, ibmad.MethodGetResp, ibmad.AttrSourceRoute, 1)
		want["unknown_tid"]++
		pk.MAD.SetTID(id<<48 | 0xdead0000 | id)
		if err := mix.Send(pk); err != nil {
			t.Fatalf("flooder send: %v", err)
		}
	}
	// What reaches the exporter: not the base-version-2 MADs nor the
	// responses to other clients, which ibsim itself drops.
	reach, mixed := nGets, 0
	for r, n := range want {
		mixed += n
		if r != "base_version" && r != "unknown_tid" {
			reach += n
		}
	}

	// The exporter keeps tracing, and accounts for every MAD sent to it.
	floodEnd := time.Now()
	b, _, _ := m.check(t, 5*matrixInterval, "far and near traced OK after the flood", tracedOKSince(floodEnd, lidDests...))
	d := func(name string, labels ...string) float64 {
		return metric(b, name, labels...) - metric(before, name, labels...)
	}
	sumFamily := func(body, family string) float64 {
		var s float64
		for k, v := range samples(body) {
			if k == family || strings.HasPrefix(k, family+"{") {
				s += v
			}
		}
		return s
	}
	var accounted float64
	for _, f := range accountingFamilies(b) {
		accounted += sumFamily(b, f) - sumFamily(before, f)
	}
	unknownTID := d("ibtracer_mad_dropped_total", "reason", "unknown_tid")
	accounted -= unknownTID
	rateLimited := d("ibtracer_agent_dropped_total", "reason", "rate_limited")
	elapsed := time.Since(t0).Seconds()
	if minDropped := float64(nGets) - floodBurst - floodRate*floodTime.Seconds(); rateLimited < minDropped {
		t.Errorf("agent_dropped_total{reason=rate_limited} moved by %v, want at least %v (%d Gets in %v, burst %d, %d/s)",
			rateLimited, minDropped, nGets, floodTime, floodBurst, floodRate)
	}
	for _, c := range []struct {
		what    string
		got     float64
		atLeast int
	}{
		{"agent_requests_total{SourceRoute,unsupported_method} (Sets)", d("ibtracer_agent_requests_total", "attribute", "SourceRoute", "result", "unsupported_method"), want["set"]},
		{"agent_requests_total{unknown,unsupported_attr}", d("ibtracer_agent_requests_total", "attribute", "unknown", "result", "unsupported_attr"), want["unknown_attr"]},
		{"agent_requests_total{SourceRoute,bad_hop_count} (hop counts 0 and 255)", d("ibtracer_agent_requests_total", "attribute", "SourceRoute", "result", "bad_hop_count"), want["hop0"] + want["hop255"]},
		{"mad_dropped_total{unknown_tid}", unknownTID, 1},
	} {
		if c.got < float64(c.atLeast) {
			t.Errorf("%s moved by %v, want at least %d", c.what, c.got, c.atLeast)
		}
	}
	if accounted < float64(reach) {
		t.Errorf("the exporter accounted for %v of the %d requests that reached it (families %v); the class-version-2 and "+
			"random ones (%d) are answered or dropped by the transport uncounted", accounted, reach, accountingFamilies(b),
			want["class_version"]+want["random"])
	}
	for _, dest := range lidDests {
		if n := d("ibtracer_last_trace_timestamp_seconds", "dest", dest); n <= 0 {
			t.Errorf("%s was not traced during the flood", dest)
		}
		for _, l := range strings.Split(moved(before, b), "\n") {
			if strings.Contains(l, fmt.Sprintf(`ibtracer_trace_failures_total{dest=%q`, dest)) {
				t.Errorf("a trace of %s failed during the flood: %s", dest, strings.TrimSpace(l))
			}
		}
	}
	cpu := d("process_cpu_seconds_total")
	rss0, rss1 := metric(before, "process_resident_memory_bytes"), metric(b, "process_resident_memory_bytes")
	t.Logf("flood: %d valid Gets from host3 in %v, %d more MADs from host5 %v, %d replies back to host5; "+
		"CPU %.2fs over %.1fs, RSS %.1f -> %.1f MiB; counters moved:\n  %s",
		nGets, floodTime.Round(time.Millisecond), mixed, want, replies.Load(), cpu, elapsed, rss0/(1<<20), rss1/(1<<20),
		moved(before, b))
	if cpu > elapsed/2 {
		t.Errorf("the exporter used %.2f CPU seconds in %.1f s of flood: more than half a core", cpu, elapsed)
	}
	if rss1-rss0 > 64<<20 {
		t.Errorf("RSS grew by %.1f MiB during the flood", (rss1-rss0)/(1<<20))
	}
}

// accountingRe names the counter families that say what became of a
// received MAD: served by the agent, dropped by the agent or the engine,
// or answered or discarded by the transport on its own.
var accountingRe = regexp.MustCompile(`^ibtracer_(agent_requests|agent_dropped|agent_pings|mad_dropped|mad_received_unhandled|transport_\w+)_total$`)

func accountingFamilies(body string) []string {
	seen := map[string]bool{}
	for k := range samples(body) {
		f := k
		if i := strings.IndexByte(k, '{'); i >= 0 {
			f = k[:i]
		}
		if accountingRe.MatchString(f) {
			seen[f] = true
		}
	}
	var out []string
	for f := range seen {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// drain reads and counts what tr receives until it is closed.
func drain(tr ibmad.Transport) *atomic.Int64 {
	var n atomic.Int64
	go func() {
		var pk ibmad.Packet
		for tr.Recv(&pk) == nil {
			n.Add(1)
		}
	}()
	return &n
}

// sourceRoute is a SourceRoute MAD of the ibtracer class to lid.
func sourceRoute(lid uint16, method ibmad.Method, attr ibmad.AttrID, hops uint8) *ibmad.Packet {
	pk := &ibmad.Packet{Addr: ibmad.GSIAddress(lid, 0), TimeoutMS: 100}
	_ = ibmad.NewVendorGet(ibmad.ClassIBTracer, ibmad.OUIOpenIB, attr, 0).MarshalTo(pk.MAD[:])
	pk.MAD.SetMethod(method)
	sr := ibmad.SourceRoute{HopCount: hops}
	for i := range sr.InPort {
		sr.InPort[i] = 1
	}
	_ = sr.MarshalTo(pk.MAD.VendorData())
	return pk
}

// randomMAD is random bytes, but a request of base version 1, class
// version 1 or 2, in a class the exporter registers (SA, ibtracer, ibping),
// so that it reaches the exporter. Seen here, ibsim itself drops a
// response that answers no client's request, a base version other than 1
// and a request with a large class version (0x53), and answers a request
// of a class no client registered (0x31).
func randomMAD(lid uint16, rng *rand.Rand) *ibmad.Packet {
	pk := &ibmad.Packet{Addr: ibmad.GSIAddress(lid, 0), TimeoutMS: 100}
	for i := range pk.MAD {
		pk.MAD[i] = byte(rng.Uint32())
	}
	classes := []byte{0x03, 0x30, 0x32}
	pk.MAD[0] = 1
	pk.MAD[1] = classes[rng.IntN(len(classes))]
	pk.MAD[2] = 1 + byte(rng.IntN(2))
	pk.MAD[3] &^= 0x80 // a request
	if pk.MAD[3] == byte(ibmad.MethodTrapRepress) {
		pk.MAD[3] = byte(ibmad.MethodGet)
	}
	return pk
}
