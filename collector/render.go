package collector

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/go-kit/log"

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
// it and send it too, rather than render their own: a render at 10,000 destinations holds about
// 170 MB at its peak, and four rendered side by side held 490 MB
// (docs/exporter.md, "Scrape memory"). Such a scrape's answer is at most one render
// older than the scrape; each answer is sent whole to every one of them.
func renderFirst(s *webserve.SendBudget, h http.Handler) http.Handler {
	var shared renders
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, release, ok := shared.do(r, h)
		if !ok {
			return // the client went away while it waited
		}
		defer release()
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

// renders are the answers being rendered, by form, and the scrapes that
// wait for each.
type renders struct {
	mu sync.Mutex // guards m
	m  map[string]*render
}

type render struct {
	done chan struct{}
	b    *bufferedWriter
	refs int // scrapes that send it; the last one frees it
}

// do renders r with h, or joins the render of the same form under way,
// and returns the answer and the function that gives it up; ok is false
// when r's client went away while it waited.
func (rs *renders) do(r *http.Request, h http.Handler) (b *bufferedWriter, release func(), ok bool) {
	key := form(r)
	rs.mu.Lock()
	if x := rs.m[key]; x != nil {
		x.refs++
		rs.mu.Unlock()
		select {
		case <-x.done:
			return x.b, func() { rs.release(x) }, true
		case <-r.Context().Done():
			rs.release(x)
			return nil, nil, false
		}
	}
	x := &render{done: make(chan struct{}), b: &bufferedWriter{header: http.Header{}}, refs: 1}
	if rs.m == nil {
		rs.m = map[string]*render{}
	}
	rs.m[key] = x
	rs.mu.Unlock()
	defer func() {
		// Later scrapes render afresh; those waiting get this one (a
		// panic in h, which net/http recovers, leaves them an empty
		// 200: never a wait without end).
		rs.mu.Lock()
		delete(rs.m, key)
		rs.mu.Unlock()
		if x.b.code == 0 {
			x.b.code = http.StatusOK
		}
		close(x.done)
	}()
	h.ServeHTTP(x.b, r)
	return x.b, func() { rs.release(x) }, true
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

// release gives up one scrape's hold on x; the last frees its pieces.
func (rs *renders) release(x *render) {
	rs.mu.Lock()
	x.refs--
	last := x.refs == 0
	rs.mu.Unlock()
	if last {
		<-x.done // a waiter that left early never frees a render under way
		x.b.free()
	}
}

// chunkSize is the size of the pieces a buffered answer is kept in: no
// copy as it grows, and the pieces are reused from one scrape to the next.
const chunkSize = 64 << 10

var chunkPool = sync.Pool{New: func() any { return new([chunkSize]byte) }}

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
		if last < 0 || len(b.chunks[last]) == chunkSize {
			b.chunks = append(b.chunks, chunkPool.Get().(*[chunkSize]byte)[:0])
			last++
		}
		c := b.chunks[last]
		k := copy(c[len(c):chunkSize], p)
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

// free returns the pieces to the pool.
func (b *bufferedWriter) free() {
	for _, c := range b.chunks {
		chunkPool.Put((*[chunkSize]byte)(c[:chunkSize]))
	}
	b.chunks = nil
}
