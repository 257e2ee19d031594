package ibsim_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

// BenchmarkEngineOnIbsim measures what one MAD costs through the engine
// and this transport with as many in flight as `ibtracer --all` keeps
// (its --concurrency, 32), against ibsim on fattree-128 from H0-0: the
// floor under a whole-fabric trace, whose MADs cannot go faster than
// these (docs/architecture.md, "Where a run's time goes"). Each op sends
// 632 directed-route NodeInfo Gets, the MADs of one `--all
// --no-validate` on that fabric, over paths of one to four hops (the
// leaf, a spine, another leaf, a host), as the traces' walks go; every
// port of fattree-128 is cabled, so each path has a node at its end.
func BenchmarkEngineOnIbsim(b *testing.B) {
	const mads, inFlight = 632, 32
	fab := ibsimtest.Start(b, filepath.Join(topoDir, "fattree-128.net"), ibsimtest.Options{})
	e := ibmad.NewEngine(fab.Dial("H0-0", false), ibmad.Options{})
	defer e.Close()
	paths := make([]ibmad.DRPath, mads)
	for i := range paths {
		// H0-0's port 1 → L0; L0's ports 9..16 → the spines; a spine's
		// ports 1..16 → the leaves; a leaf's ports 1..8 → its hosts.
		full := ibmad.DRPath{1, uint8(9 + i%8), uint8(1 + (i/8)%16), uint8(1 + (i/128)%8)}
		paths[i] = full[:1+i%4]
	}
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		work := make(chan ibmad.DRPath, mads)
		for _, p := range paths {
			work <- p
		}
		close(work)
		var wg sync.WaitGroup
		for range inFlight {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var resp ibmad.Response
				for p := range work {
					s, _ := ibmad.NewDRGet(ibmad.AttrNodeInfo, 0, p)
					req := &ibmad.Request{Addr: ibmad.DRAddress()}
					_ = s.MarshalTo(req.MAD[:])
					if err := e.Do(ctx, req, &resp); err != nil {
						b.Errorf("NodeInfo over %v: %v", p, err)
						return
					}
					if st := ibmad.SMPStatus(&resp.MAD); st != 0 {
						b.Errorf("NodeInfo over %v: status %v", p, st)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*mads), "ns/MAD")
}
