package sim

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// BenchmarkEngineRoundTrip measures MAD round trips through the engine
// over the sim transport: LID-routed NodeInfo Gets from a host to its leaf
// switch, many goroutines sharing one engine as the tracer does.
func BenchmarkEngineRoundTrip(b *testing.B) {
	f := mustFabric(b, "fattree-128.net", Options{})
	tr, err := f.Attach("H0-0", 0)
	if err != nil {
		b.Fatal(err)
	}
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: time.Second, MaxOutstanding: 1024, MaxPerTarget: 1024})
	defer e.Close()
	lid, _ := f.LIDOf("L0", 0)
	var tmpl ibmad.MAD
	_ = ibmad.NewLIDGet(ibmad.AttrNodeInfo, 0).MarshalTo(tmpl[:])
	b.ReportAllocs()
	b.SetParallelism(16)
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		req := &ibmad.Request{MAD: tmpl, Addr: ibmad.SMPAddress(lid)}
		var resp ibmad.Response
		ctx := context.Background()
		for pb.Next() {
			if err := e.Do(ctx, req, &resp); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "MADs/s")
}

// BenchmarkEngineRoundTripSerial is one requester waiting for each answer:
// the latency floor of the engine and the sim.
func BenchmarkEngineRoundTripSerial(b *testing.B) {
	f := mustFabric(b, "chain-5.net", Options{})
	tr, _ := f.Attach("hostA", 0)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: time.Second})
	defer e.Close()
	req := &ibmad.Request{Addr: ibmad.DRAddress()}
	s, _ := ibmad.NewDRGet(ibmad.AttrNodeInfo, 0, ibmad.DRPath{1, 2})
	_ = s.MarshalTo(req.MAD[:])
	var resp ibmad.Response
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := e.Do(context.Background(), req, &resp); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFatTree3Build builds and routes a three-level fat tree of k=36
// (11,664 hosts, 1,620 switches); reports the heap it keeps.
func BenchmarkFatTree3Build(b *testing.B) {
	for i := 0; i < b.N; i++ {
		topo, err := FatTree3(36, 18)
		if err != nil {
			b.Fatal(err)
		}
		f, err := New(topo, Options{})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		b.ReportMetric(float64(len(f.CALIDs())), "CA-ports")
		runtime.KeepAlive(f)
	}
}
