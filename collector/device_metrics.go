package collector

import (
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/umad"
)

// dDeviceDown says why device_up is 0, with a bounded reason, so that a
// dashboard or an alert tells a RoCE-only node from a missing driver or a
// permission problem without reading the log.
var dDeviceDown = desc("device_down_reason", "Why no InfiniBand device is open (1 for the reason, only while device_up is 0): "+
	"roce_port (the only ports are RoCE), permission, missing (no device, driver or ib_umad), lost, error.", "reason")

// deviceDownReason sorts the error of a device that is not open.
func deviceDownReason(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return "error" // not opened yet, no error known
	case errors.Is(err, umad.ErrRoCEPort):
		return "roce_port"
	case errors.Is(err, os.ErrPermission):
		return "permission"
	case errors.Is(err, ibmad.ErrDeviceLost):
		return "lost"
	case errors.Is(err, umad.ErrNoDevice), errors.Is(err, os.ErrNotExist),
		errors.As(err, &errno) && (errno == syscall.ENODEV || errno == syscall.ENXIO):
		return "missing"
	}
	return "error"
}

// NewMADRTT returns the engine's RTT histogram (by class) and the observer
// to give ibmad.Options.RTTObserver.
func NewMADRTT() (*prometheus.HistogramVec, func(ibmad.MgmtClass, time.Duration)) {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "mad_rtt_seconds", Help: "Round-trip time of answered MADs, by management class.",
		Buckets: latencyBuckets, NativeHistogramBucketFactor: 1.1, NativeHistogramMaxBucketNumber: 100,
		NativeHistogramMinResetDuration: time.Hour,
	}, []string{"class"})
	return h, func(c ibmad.MgmtClass, d time.Duration) { h.WithLabelValues(c.String()).Observe(d.Seconds()) }
}

// The MAD budget (mad_rate; Exporter.Install gives it to the engine).
var (
	dBudget = desc("mad_budget_per_second", "The MAD budget: MADs per second the engine may send in all (scope=\"all\") "+
		"and to one node (scope=\"target\"); 0: no limit.", "scope")
	dBudgetWaits   = desc("mad_budget_waits_total", "MAD attempts that waited for the budget.")
	dBudgetWaited  = desc("mad_budget_wait_seconds_total", "Time MAD attempts spent waiting for the budget, summed.")
	dBudgetExpired = desc("mad_budget_expired_total", "Requests whose deadline passed while they waited for the budget.")
)

func collectBudget(ch chan<- prometheus.Metric, st ibmad.BudgetStats) {
	ch <- prometheus.MustNewConstMetric(dBudget, prometheus.GaugeValue, st.Rate, "all")
	ch <- prometheus.MustNewConstMetric(dBudget, prometheus.GaugeValue, st.PerTarget, "target")
	ch <- prometheus.MustNewConstMetric(dBudgetWaits, prometheus.CounterValue, float64(st.Waits))
	ch <- prometheus.MustNewConstMetric(dBudgetWaited, prometheus.CounterValue, st.Waited.Seconds())
	ch <- prometheus.MustNewConstMetric(dBudgetExpired, prometheus.CounterValue, float64(st.Expired))
}
