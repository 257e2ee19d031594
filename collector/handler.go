package collector

import (
	"net/http"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/internal/webserve"
)

// metricsHandler is MetricsHandler with a budget of bytes for the
// answers being sent (renderFirst), counted in
// ibtracer_http_answers_cut_total, registered on reg.
func metricsHandler(reg *prometheus.Registry, maxInFlight int, budget int64, logger log.Logger) http.Handler {
	s := webserve.NewSendBudget(budget, logger)
	register(reg, s.Collector())
	return webserve.LimitInFlight(maxInFlight, renderFirst(s, promHandler(reg, logger)))
}
