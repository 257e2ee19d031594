package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// applyBudgetLocked gives the engine the configuration's MAD budget
// (mad_rate, mad_rate_per_target): on every reload and every new device
// (Exporter.mu held).
func (e *Exporter) applyBudgetLocked() {
	e.engine.SetBudget(ibmad.Budget{Rate: e.cfg.MADRate, PerTarget: e.cfg.MADRatePerTarget})
}

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
