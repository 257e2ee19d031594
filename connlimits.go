package main

import (
	"syscall"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/internal/connlimit"
)

// connLimiter returns the limiter of --web.max-connections (nil for 0: no
// limit), lowered to half the process's open-file limit so that the
// connections leave descriptors for the device, the configuration and
// the scrapes themselves, and the collector of its metrics. It logs the
// connections it closes to make room at the 1st, 2nd, 4th, 8th... one.
func connLimiter(n int, logger log.Logger) (*connlimit.Limiter, prometheus.Collector) {
	if n <= 0 {
		return nil, nil
	}
	if fds := openFileLimit(); fds > 0 && uint64(n) > fds/2 {
		level.Info(logger).Log("msg", "--web.max-connections lowered to half the open-file limit", "requested", n,
			"open_file_limit", fds, "max_connections", fds/2)
		n = int(fds / 2)
	}
	lim := connlimit.New(n)
	lim.OnEvict = func(n uint64) {
		if n&(n-1) == 0 {
			level.Warn(logger).Log("msg", "HTTP connection limit reached: closed the connection waiting longest for a request to admit a new one",
				"max_connections", lim.Max(), "closed_total", n)
		}
	}
	return lim, connCollector(lim)
}

func connCollector(lim *connlimit.Limiter) prometheus.Collector {
	return collectors{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "ibtracer", Subsystem: "http", Name: "connections",
			Help: "HTTP connections open now."}, func() float64 { return float64(lim.Open()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "ibtracer", Subsystem: "http", Name: "connections_limit",
			Help: "Most HTTP connections open at once (--web.max-connections, at most half the open-file limit)."},
			func() float64 { return float64(lim.Max()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "ibtracer", Subsystem: "http", Name: "connections_evicted_total",
			Help: "HTTP connections closed at the limit, while waiting for a request (idle keep-alive or new), to admit a new one."},
			func() float64 { return float64(lim.Evicted()) }),
	}
}

// collectors is several collectors as one.
type collectors []prometheus.Collector

func (cs collectors) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range cs {
		c.Describe(ch)
	}
}

func (cs collectors) Collect(ch chan<- prometheus.Metric) {
	for _, c := range cs {
		c.Collect(ch)
	}
}

// openFileLimit is the process's soft limit of open files (0: unknown).
func openFileLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return r.Cur
}
