package webserve

import (
	"fmt"
	"net/http"
)

// LimitInFlight serves at most n requests at once while they render (0:
// no limit); more get 503 at once (the client retries; nothing queues).
// A request gives its slot up while a write to its client is under way
// and takes one back, waiting if need be, when the write returns: a
// client that sends a request and never reads the answer holds a
// connection until the server's write timeout, never a slot a real
// scrape needs (docs/architecture.md, "HTTP pages and logs").
func LimitInFlight(n int, h http.Handler) http.Handler {
	if n <= 0 {
		return h
	}
	sem := make(slots, n)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sem.tryAcquire() {
			http.Error(w, fmt.Sprintf("too many concurrent requests (at most %d); retry", n), http.StatusServiceUnavailable)
			return
		}
		yw := &yieldingWriter{ResponseWriter: w, slot: sem, held: true}
		defer yw.yield()
		h.ServeHTTP(yw, r)
	})
}

// slots is a counting semaphore.
type slots chan struct{}

func (s slots) tryAcquire() bool {
	select {
	case s <- struct{}{}:
		return true
	default:
		return false
	}
}

func (s slots) acquire() { s <- struct{}{} }
func (s slots) release() { <-s }

// yieldingWriter gives its request's slot up for the length of each write
// to the client, or for good once the handler calls yield. One request's
// handler uses it from one goroutine.
type yieldingWriter struct {
	http.ResponseWriter
	slot slots
	held bool
}

func (w *yieldingWriter) Write(p []byte) (int, error) {
	if w.held {
		w.slot.release()
		defer w.slot.acquire()
	}
	return w.ResponseWriter.Write(p)
}

// Yield gives up the in-flight slot (LimitInFlight) that w's request
// holds, for the rest of the request: a handler that has rendered its
// answer calls it before it sends the answer to a client that may be
// slow. It does nothing for a w that holds no slot.
func Yield(w http.ResponseWriter) {
	if yw, ok := w.(*yieldingWriter); ok {
		yw.yield()
	}
}

// yield gives the slot up for the rest of the request.
func (w *yieldingWriter) yield() {
	if w.held {
		w.held = false
		w.slot.release()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *yieldingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
