package collector

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
)

// stalledClient is a ResponseWriter whose writes block until its write
// deadline is set (as a connection's would fail then), reporting on
// started when the first write begins.
type stalledClient struct {
	discardWriter
	started  chan<- struct{}
	deadline chan struct{}
	once     sync.Once
}

func (c *stalledClient) Write(p []byte) (int, error) {
	c.started <- struct{}{}
	<-c.deadline
	return 0, os.ErrDeadlineExceeded
}

func (c *stalledClient) SetWriteDeadline(time.Time) error {
	c.once.Do(func() { close(c.deadline) })
	return nil
}

// Answers rendered for clients that do not read are bounded in memory:
// past the budget, the answer sending longest is cut off (its write
// deadline set to now), so n stalled clients hold at most the budget, not
// n answers, and a real scrape still gets its answer.
func TestStalledAnswersAreBoundedInMemory(t *testing.T) {
	e := bigExporter(t, 200)
	defer e.Stop()
	w := &discardWriter{header: http.Header{}}
	MetricsHandler(NewRegistry(e), 0, log.NewNopLogger()).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	reg := NewRegistry(e)
	size := w.n
	budget := int64(3*size + size/2) // room for three answers
	h := metricsHandler(reg, 4, budget, log.NewNopLogger())
	started := make(chan struct{})
	var clients []*stalledClient
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range 8 {
		c := &stalledClient{discardWriter: discardWriter{header: http.Header{}}, started: started, deadline: make(chan struct{})}
		clients = append(clients, c)
		defer c.SetWriteDeadline(time.Now())
		wg.Add(1)
		go func() { defer wg.Done(); h.ServeHTTP(c, httptest.NewRequest(http.MethodGet, "/", nil)) }()
		select {
		case <-started:
		case <-time.After(30 * time.Second):
			t.Fatalf("stalled client %d did not start", i)
		}
	}
	cut := 0
	for _, c := range clients {
		select {
		case <-c.deadline:
			cut++
		default:
		}
	}
	// 8 answers of size bytes against a budget of 3.5: the 5 oldest cut.
	if cut != 5 {
		t.Errorf("%d of 8 stalled answers of %d bytes cut off at a budget of %d bytes; want 5", cut, size, budget)
	}
	for i, c := range clients[:5] {
		if select1(c.deadline) == nil {
			t.Errorf("stalled client %d (one of the oldest) was not cut off", i)
		}
	}
	if n := gathered(t, reg.Registry, "ibtracer_http_answers_cut_total"); n != 5 {
		t.Errorf("ibtracer_http_answers_cut_total %v, want 5", n)
	}
}

// gathered is the value of the unlabelled counter name in reg.
func gathered(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no %s", name)
	return 0
}

// select1 returns ch's close as a non-nil error, at once.
func select1(ch chan struct{}) error {
	select {
	case <-ch:
		return errors.New("closed")
	default:
		return nil
	}
}
