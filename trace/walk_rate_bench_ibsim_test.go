package trace

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

// BenchmarkIbsimAnswerRate: how fast ibsim answers directed-route
// NodeInfo SMPs through our engine, from H0-0 of fattree-128, with 1, 4,
// 16 and 64 MADs in flight (the window; the per-target limit raised to
// the window, the targets spread over the DR paths to the leaf, the 8 spines and
// the other leaves). It
// tells whether ibtracer --all's wall time per MAD is ibsim's or ours
// (docs/architecture.md, "Facts shared by a run").
func BenchmarkIbsimAnswerRate(b *testing.B) {
	fab := ibsimtest.Start(b, filepath.Join(topoDir, "fattree-128.net"), ibsimtest.Options{})
	const mads = 4096
	for _, w := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("window=%d", w), func(b *testing.B) {
			tr := fab.Dial("H0-0", false)
			e := ibmad.NewEngine(tr, ibmad.Options{MaxOutstanding: w, MaxPerTarget: w, Timeout: 10 * time.Second})
			defer e.Close()
			paths := []ibmad.DRPath{{1}}
			for p := byte(9); p <= 16; p++ { // the 8 spines, and the other leaves through them
				paths = append(paths, ibmad.DRPath{1, p})
				for q := byte(2); q <= 16; q++ {
					paths = append(paths, ibmad.DRPath{1, p, q})
				}
			}
			for i := 0; i < b.N; i++ {
				start := time.Now()
				var wg sync.WaitGroup
				errs := make(chan error, w)
				for g := 0; g < w; g++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for k := g; k < mads; k += w {
							req := &ibmad.Request{Addr: ibmad.DRAddress()}
							s, _ := ibmad.NewDRGet(ibmad.AttrNodeInfo, 0, paths[k%len(paths)])
							_ = s.MarshalTo(req.MAD[:])
							var resp ibmad.Response
							if err := e.Do(context.Background(), req, &resp); err != nil {
								errs <- err
								return
							}
							if st := resp.MAD.Status() &^ ibmad.StatusDirection; st != 0 {
								errs <- fmt.Errorf("status %#04x", uint16(st))
								return
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					b.Fatal(err)
				}
				b.ReportMetric(float64(time.Since(start).Microseconds())/mads, "µs/MAD")
			}
		})
	}
}
