package webserve_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ibtracer/ibtracer_exporter/internal/webserve"
)

// At most one request renders at once: a second one that arrives
// meanwhile gets 503 at once rather than queue.
func ExampleLimitInFlight() {
	rendering, done, finished := make(chan struct{}), make(chan struct{}), make(chan struct{})
	h := webserve.LimitInFlight(1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(rendering)
		<-done
		fmt.Fprintln(w, "ok")
	}))
	first := httptest.NewRecorder()
	go func() { h.ServeHTTP(first, httptest.NewRequest(http.MethodGet, "/", nil)); close(finished) }()
	<-rendering
	second := httptest.NewRecorder()
	h.ServeHTTP(second, httptest.NewRequest(http.MethodGet, "/", nil))
	close(done)
	<-finished
	fmt.Println(first.Code, second.Code)
	// Output: 200 503
}
