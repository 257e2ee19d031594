package webserve

import (
	"net/http"
	"testing"
	"time"
)

// The flags' timeouts reach the server; turning the read timeout off
// keeps the 10 s bound on the request headers.
func TestServerTimeouts(t *testing.T) {
	for _, c := range []struct {
		w      Limits
		header time.Duration
	}{
		{DefaultLimits, 10 * time.Second},
		{Limits{ReadTimeout: 3 * time.Second, WriteTimeout: 5 * time.Second, IdleTimeout: 7 * time.Second}, 3 * time.Second},
		{Limits{}, 10 * time.Second},
	} {
		srv := NewServer(http.NotFoundHandler(), c.w, nil)
		if srv.ReadHeaderTimeout != c.header || srv.ReadTimeout != c.w.ReadTimeout || srv.WriteTimeout != c.w.WriteTimeout ||
			srv.IdleTimeout != c.w.IdleTimeout || srv.ErrorLog == nil {
			t.Errorf("%+v: header %v read %v write %v idle %v (error log %v); want header %v", c.w, srv.ReadHeaderTimeout,
				srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout, srv.ErrorLog != nil, c.header)
		}
	}
}
