package main

import (
	stdlog "log"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/ibtracer/ibtracer_exporter/internal/strictint"
)

// webLimits are the HTTP server's bounds (docs/architecture.md, "HTTP
// server limits").
type webLimits struct {
	maxConns     int
	readTimeout  time.Duration
	writeTimeout time.Duration
	idleTimeout  time.Duration
}

// defaultWebLimits are the flags' defaults.
var defaultWebLimits = webLimits{maxConns: 512, readTimeout: 30 * time.Second, writeTimeout: time.Minute,
	idleTimeout: time.Minute}

func addWebLimitFlags(app *kingpin.Application, w *webLimits) {
	strictint.IntVar(app.Flag("web.max-connections", "Most HTTP connections open at once (0: no limit, at most 1000000), and at most half the open-file limit; at the limit, the connection that has waited longest for a request is closed to admit a new one.").
		Default(strconv.Itoa(defaultWebLimits.maxConns)), &w.maxConns, 0, 1_000_000)
	app.Flag("web.read-timeout", "Longest time to read a request, headers and body (0: none; the headers are still read within 10s).").Default(defaultWebLimits.readTimeout.String()).DurationVar(&w.readTimeout)
	app.Flag("web.write-timeout", "Longest time from the end of a request's headers to the end of its answer (0: none); a client that reads slower is cut off.").
		Default(defaultWebLimits.writeTimeout.String()).DurationVar(&w.writeTimeout)
	app.Flag("web.idle-timeout", "Longest time a keep-alive connection waits for its next request (0: the read timeout).").Default(defaultWebLimits.idleTimeout.String()).DurationVar(&w.idleTimeout)
}

// newServer returns the HTTP server of h, with w's timeouts, its own
// errors (such as "accept4: too many open files") logged through logger.
// The request headers are read within 10 s, or the read timeout if it is
// shorter (0 turns a timeout off, but not that of the headers).
func newServer(h http.Handler, w webLimits, logger log.Logger) *http.Server {
	header := 10 * time.Second
	if w.readTimeout > 0 {
		header = min(header, w.readTimeout)
	}
	return &http.Server{Handler: h, ReadHeaderTimeout: header, ReadTimeout: w.readTimeout,
		WriteTimeout: w.writeTimeout, IdleTimeout: w.idleTimeout, ErrorLog: stdlog.New(serverErrorLog{logger}, "", 0)}
}

// serverErrorLog writes the http.Server's log lines as our error lines.
type serverErrorLog struct{ l log.Logger }

func (s serverErrorLog) Write(p []byte) (int, error) {
	level.Error(s.l).Log("msg", "http server", "err", strings.TrimSpace(string(p)))
	return len(p), nil
}
