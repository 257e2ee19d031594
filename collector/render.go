package collector

import (
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/go-kit/log"
	"golang.org/x/sync/singleflight"

	"github.com/ibtracer/ibtracer_exporter/internal/webserve"
)

// metricsHandler is MetricsHandler with a budget of bytes for the
// answers being sent (renderFirst), counted in
// ibtracer_http_answers_cut_total, registered on reg.
func metricsHandler(reg *Registry, maxInFlight int, budget int64, logger log.Logger) http.Handler {
	s := webserve.NewSendBudget(budget, logger)
	reg.MustRegister(s.Collector())
	return webserve.LimitInFlight(maxInFlight, renderFirst(s, promHandler(reg, logger)))
}

// renderFirst serves h into memory and sends the answer only when h has
// returned, with its Content-Length (a client can tell a cut answer from
// a whole one): under webserve.LimitInFlight, the scrape's slot is held while the
// registry is gathered and encoded (gzip'd when the client accepts it)
// and given up before the first byte is sent, so a slow client costs the
// memory of its answer until the write timeout, not a slot; s bounds that
// memory over all the answers being sent.
//
// Scrapes that arrive while an answer in the same form (form: the same
// query and the same headers promhttp reads) is being rendered wait for
// it and send it too, rather than render their own: a render at 10,000
// destinations holds about 170 MB at its peak, and four rendered side by
// side held 490 MB (docs/exporter.md, "Scrape memory"). Such a scrape's
// answer is at most one render older than the scrape; each answer is
// sent whole to every one of them.
func renderFirst(s *webserve.SendBudget, h http.Handler) http.Handler {
	var shared renders
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := shared.do(r, h)
		if !ok {
			return // the client went away while it waited
		}
		webserve.Yield(w)
		size := b.size()
		defer s.Begin(w, int64(size))()
		for k, v := range b.header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.WriteHeader(b.code)
		for _, c := range b.chunks {
			if _, err := w.Write(c); err != nil {
				return
			}
		}
	})
}

// renders are the answers being rendered, one per form, and the scrapes
// that wait for each (singleflight). An answer is read-only once
// rendered; the last scrape that sends it lets the collector have it.
type renders struct{ g singleflight.Group }

// do renders r with h, or joins the render of the same form under way,
// and returns the answer; ok is false when r's client went away while
// it waited. The scrape whose render it is waits for its end even if its
// client goes away, so that its in-flight slot is held while it renders
// (unless its client went away before the render began: singleflight
// starts it in a goroutine of its own).
// A panic in h is the render's scrape's again (net/http recovers it and
// drops that connection); those waiting get what was rendered, a 200
// (singleflight would otherwise end the process: DoChan).
func (rs *renders) do(r *http.Request, h http.Handler) (b *bufferedWriter, ok bool) {
	var (
		mine     atomic.Bool // the render is r's
		panicked any
	)
	ch := rs.g.DoChan(form(r), func() (v any, _ error) {
		mine.Store(true)
		b := &bufferedWriter{header: http.Header{}}
		defer func() {
			panicked = recover()
			if b.code == 0 {
				b.code = http.StatusOK
			}
			v = b
		}()
		h.ServeHTTP(b, r)
		return b, nil
	})
	var res singleflight.Result
	select {
	case res = <-ch:
	case <-r.Context().Done():
		if !mine.Load() {
			return nil, false
		}
		res = <-ch
	}
	if panicked != nil { // read after the result: the render has ended
		panic(panicked)
	}
	return res.Val.(*bufferedWriter), true
}

// form is everything of r that promhttp (client_golang v1.25.0) and
// streamRenderer read to shape the answer: the URL query (a ?name[]
// filter), Accept (promhttp reads its first line, expfmt.NegotiateAccept)
// and Accept-Encoding (every line, promhttp's negotiateEncodingWriter).
// Two requests share a render only when their forms are equal; a form
// compared whole (the whole query, every line of both headers) may keep
// apart two requests promhttp would answer alike, never the reverse
// (docs/architecture.md, "Rendering").
func form(r *http.Request) string {
	query := ""
	if r.URL != nil {
		query = r.URL.RawQuery
	}
	return fmt.Sprintf("%q %q %q", query, r.Header.Values("Accept"), r.Header.Values("Accept-Encoding"))
}

// chunkSize is the largest piece a buffered answer is kept in: no copy
// as it grows, and a small answer (a family held in stream.go) in a
// piece of its size.
const (
	chunkSize     = 64 << 10
	firstChunkCap = 512
)

// bufferedWriter is a ResponseWriter that keeps the answer in memory, in
// pieces of chunkSize.
type bufferedWriter struct {
	header http.Header
	code   int
	chunks [][]byte
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(code int) {
	if b.code == 0 {
		b.code = code
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	n := len(p)
	for len(p) > 0 {
		last := len(b.chunks) - 1
		if last < 0 || len(b.chunks[last]) == cap(b.chunks[last]) {
			// Each piece as large as the answer so far, up to chunkSize.
			b.chunks = append(b.chunks, make([]byte, 0, min(chunkSize, max(firstChunkCap, len(p), b.size()))))
			last++
		}
		c := b.chunks[last]
		k := copy(c[len(c):cap(c)], p)
		b.chunks[last], p = c[:len(c)+k], p[k:]
	}
	return n, nil
}

func (b *bufferedWriter) size() int {
	n := 0
	for _, c := range b.chunks {
		n += len(c)
	}
	return n
}
