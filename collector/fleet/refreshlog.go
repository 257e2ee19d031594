package fleet

import (
	"errors"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
)

// refreshLog is what a selector's discovery loop last logged about its
// refreshes, so that it logs when the refresh starts failing, when the
// kind of failure changes and when it recovers, not on every attempt
// (the loop retries every second while there is no device;
// docs/architecture.md, "HTTP pages and logs"). Every attempt is still
// counted in discover_refreshes_total and logged at debug.
type refreshLog struct {
	failing  bool
	kind     string    // the failure's kind while failing
	since    time.Time // when the refresh started failing
	attempts uint64    // refreshes that failed since then
}

// refreshFailureKind sorts a refresh error: no inventory (no device yet,
// or none lost) or an SA that does not answer well.
func refreshFailureKind(err error) string {
	if errors.Is(err, ErrNoInventory) {
		return "no_inventory"
	}
	return "sa_error"
}

// observe folds one refresh into the state and logs what changed.
func (l *refreshLog) observe(logger log.Logger, selector int, now time.Time, err error) {
	if err == nil {
		if l.failing {
			level.Info(logger).Log("msg", "discovery refresh recovered", "selector", selector,
				"failed_refreshes", l.attempts, "failed_for", now.Sub(l.since))
		}
		*l = refreshLog{}
		return
	}
	kind := refreshFailureKind(err)
	level.Debug(logger).Log("msg", "discovery refresh failed", "selector", selector, "kind", kind, "err", err)
	switch {
	case !l.failing:
		level.Warn(logger).Log("msg", "discovery refresh failing; keeping the previous destinations", "selector", selector,
			"kind", kind, "err", err)
		*l = refreshLog{failing: true, kind: kind, since: now}
	case kind != l.kind:
		level.Warn(logger).Log("msg", "discovery refresh failure changed; keeping the previous destinations", "selector", selector,
			"kind", kind, "previous_kind", l.kind, "err", err, "failed_refreshes", l.attempts, "failed_for", now.Sub(l.since))
		l.kind = kind
	}
	l.attempts++
}
