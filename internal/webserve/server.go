package webserve

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

// Limits are the HTTP server's bounds (docs/architecture.md, "HTTP
// server limits").
type Limits struct {
	MaxConns     int // connections open at once (LimitConns; 0: no limit)
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	IdleTimeout  time.Duration
}

// DefaultLimits are the flags' defaults.
var DefaultLimits = Limits{MaxConns: 512, ReadTimeout: 30 * time.Second, WriteTimeout: time.Minute,
	IdleTimeout: time.Minute}

// AddFlags adds the --web.* flags of the limits, into w.
func AddFlags(app *kingpin.Application, w *Limits) {
	strictint.IntVar(app.Flag("web.max-connections", "Most HTTP connections open at once (0: no limit, at most 1000000), and at most half the open-file limit; at the limit, the connection that has waited longest for a request is closed to admit a new one.").
		Default(strconv.Itoa(DefaultLimits.MaxConns)), &w.MaxConns, 0, 1_000_000)
	app.Flag("web.read-timeout", "Longest time to read a request, headers and body (0: none; the headers are still read within 10s).").Default(DefaultLimits.ReadTimeout.String()).DurationVar(&w.ReadTimeout)
	app.Flag("web.write-timeout", "Longest time from the end of a request's headers to the end of its answer (0: none); a client that reads slower is cut off.").
		Default(DefaultLimits.WriteTimeout.String()).DurationVar(&w.WriteTimeout)
	app.Flag("web.idle-timeout", "Longest time a keep-alive connection waits for its next request (0: the read timeout).").Default(DefaultLimits.IdleTimeout.String()).DurationVar(&w.IdleTimeout)
}

// NewServer returns the HTTP server of h, with w's timeouts, its own
// errors (such as "accept4: too many open files") logged through logger.
// The request headers are read within 10 s, or the read timeout if it is
// shorter (0 turns a timeout off, but not that of the headers).
func NewServer(h http.Handler, w Limits, logger log.Logger) *http.Server {
	header := 10 * time.Second
	if w.ReadTimeout > 0 {
		header = min(header, w.ReadTimeout)
	}
	return &http.Server{Handler: h, ReadHeaderTimeout: header, ReadTimeout: w.ReadTimeout,
		WriteTimeout: w.WriteTimeout, IdleTimeout: w.IdleTimeout, ErrorLog: stdlog.New(serverErrorLog{logger}, "", 0)}
}

// serverErrorLog writes the http.Server's log lines as our error lines.
type serverErrorLog struct{ l log.Logger }

func (s serverErrorLog) Write(p []byte) (int, error) {
	level.Error(s.l).Log("msg", "http server", "err", strings.TrimSpace(string(p)))
	return len(p), nil
}
