package collector

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/internal/webserve"
)

// A scrape that arrives while another request's render is under way
// joins it only when promhttp would answer both alike: the same query
// (a ?name[] filter) and the same values of every header promhttp reads
// (Accept, and every Accept-Encoding line). Otherwise it renders its own:
// a plain scrape that shared a filtered one's answer would lose nearly
// every series for that cycle (docs/architecture.md, "Rendering").
func TestScrapesOfAnotherFormDoNotShareARender(t *testing.T) {
	e := bigExporter(t, 5)
	defer e.Stop()
	filtered := func() *http.Request {
		return httptest.NewRequest(http.MethodGet, "/metrics?name[]=ibtracer_device_up", nil)
	}
	plain := func() *http.Request { return httptest.NewRequest(http.MethodGet, "/metrics", nil) }
	// Accept-Encoding over two lines: promhttp reads them all (gzip, the
	// second's, wins); the first line alone asks for no compression.
	twoLines := func() *http.Request {
		r := plain()
		r.Header["Accept-Encoding"] = []string{"identity;q=0.1", "gzip"}
		return r
	}
	oneLine := func() *http.Request {
		r := plain()
		r.Header.Set("Accept-Encoding", "identity;q=0.1")
		return r
	}
	for _, c := range []struct {
		name          string
		first, second func() *http.Request
	}{
		{"filtered then plain", filtered, plain},
		{"plain then filtered", plain, filtered},
		{"gzip on a second line then identity", twoLines, oneLine},
	} {
		t.Run(c.name, func(t *testing.T) {
			started, release := make(chan struct{}, 8), make(chan struct{})
			h := MetricsHandler(NewRegistry(e, blockingCollector{started, release}), 4, log.NewNopLogger())
			first, second := &discardBody{header: http.Header{}}, &discardBody{header: http.Header{}}
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); h.ServeHTTP(first, c.first()) }()
			<-started // the first render is under way
			go func() { defer wg.Done(); h.ServeHTTP(second, c.second()) }()
			time.Sleep(200 * time.Millisecond) // the second joins it, or renders its own
			close(release)
			wg.Wait()
			for _, x := range []struct {
				w   *discardBody
				req func() *http.Request
			}{{first, c.first}, {second, c.second}} {
				alone := &discardBody{header: http.Header{}}
				h.ServeHTTP(alone, x.req()) // no render under way: its own
				if got, want := x.w.header.Get("Content-Encoding"), alone.header.Get("Content-Encoding"); got != want {
					t.Errorf("%s: Content-Encoding %q while another form rendered, %q alone", x.req().URL, got, want)
				}
				if got, want := familyNames(x.w.body.String()), familyNames(alone.body.String()); got != want {
					t.Errorf("%s: families while another form rendered:\n%s\nalone:\n%s", x.req().URL, got, want)
				}
			}
		})
	}
}

// familyNames is the names of an uncompressed answer's families, in order.
func familyNames(body string) string {
	var names []string
	for _, l := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(l, "# TYPE "); ok {
			names = append(names, strings.Fields(rest)[0])
		}
	}
	if len(names) == 0 && body != "" {
		return "(not text: " + http.DetectContentType([]byte(body)) + ")"
	}
	return strings.Join(names, " ")
}

// form (render.go) lists what promhttp reads of a request in
// client_golang v1.25.0; another version may read more (a header, a
// query parameter), and a scrape would then share an answer shaped for
// another. Upgrading client_golang means reading its promhttp.HandlerFor
// again and this version with it.
func TestFormFollowsPromhttpsVersion(t *testing.T) {
	const read = "github.com/prometheus/client_golang v1.25.0" // what form was checked against
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "github.com/prometheus/client_golang" {
			if got := f[0] + " " + f[1]; got != read {
				t.Fatalf("go.mod requires %s; form (render.go) was checked against %s: check what promhttp's handler reads of a request", got, read)
			}
			return
		}
	}
	t.Fatal("go.mod does not require client_golang")
}

// A shared render's edges (renders.do): a waiting scrape whose client
// goes away returns at once; the scrape whose render it is waits for its
// end even so (its in-flight slot is held while it renders); a panic in
// the render is that scrape's again, and the one waiting gets a 200, never
// a wait without end.
func TestSharedRenderEdges(t *testing.T) {
	for _, panics := range []bool{false, true} {
		t.Run(fmt.Sprintf("panics=%v", panics), func(t *testing.T) {
			started, release := make(chan struct{}), make(chan struct{})
			h := renderFirst(webserve.NewSendBudget(1<<20, log.NewNopLogger()), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				close(started)
				<-release
				_, _ = w.Write([]byte("answer\n"))
				if panics {
					panic(http.ErrAbortHandler)
				}
			}))
			ctx, leave := context.WithCancel(context.Background())
			first := &discardBody{header: http.Header{}}
			firstDone := make(chan any, 1)
			go func() {
				defer func() { firstDone <- recover() }()
				h.ServeHTTP(first, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx))
			}()
			<-started
			// One that leaves while it waits.
			gone, goneLeave := context.WithCancel(context.Background())
			goneDone := make(chan struct{})
			go func() {
				h.ServeHTTP(&discardBody{header: http.Header{}}, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(gone))
				close(goneDone)
			}()
			// One that waits to the end.
			waiter := &discardBody{header: http.Header{}}
			waiterDone := make(chan struct{})
			go func() { h.ServeHTTP(waiter, httptest.NewRequest(http.MethodGet, "/", nil)); close(waiterDone) }()
			time.Sleep(100 * time.Millisecond)
			goneLeave()
			select {
			case <-goneDone:
			case <-time.After(10 * time.Second):
				t.Fatal("a waiting scrape whose client went away did not return")
			}
			leave()
			select {
			case <-firstDone:
				t.Fatal("the scrape whose render it is returned before the render ended")
			case <-time.After(100 * time.Millisecond):
			}
			close(release)
			select {
			case <-waiterDone:
			case <-time.After(10 * time.Second):
				t.Fatal("the waiting scrape never got the answer")
			}
			if p := <-firstDone; (p != nil) != panics {
				t.Errorf("the render's scrape panicked with %v; want a panic: %v", p, panics)
			}
			if waiter.code != http.StatusOK || waiter.body.String() != "answer\n" {
				t.Errorf("waiting scrape: status %d, body %q; want 200, %q", waiter.code, waiter.body.String(), "answer\n")
			}
		})
	}
}
