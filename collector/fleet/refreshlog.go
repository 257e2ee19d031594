package fleet

import (
	"errors"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/ibtracer/ibtracer_exporter/internal/logonce"
)

// refreshLog is what a selector's discovery loop last logged about its
// refreshes, so that it logs when the refresh starts failing, when the
// kind of failure changes and when it recovers, not on every attempt
// (the loop retries every second while there is no device;
// docs/architecture.md, "HTTP pages and logs"). Every attempt is still
// counted in discover_refreshes_total and logged at debug.
type refreshLog struct {
	failing logonce.State[bool] // since when and how many refreshes
	kind    string              // the failure's kind while failing
	cutOff  logonce.State[bool] // whether the table came back cut short
}

// cut logs when the SA's table starts or stops coming back cut short
// (ErrTableCutShort): the ports are then listed a LID at a time.
func (l *refreshLog) cut(logger log.Logger, selector int, now time.Time, cut bool) {
	c, changed := l.cutOff.Observe(cut, now)
	switch {
	case changed && cut:
		level.Warn(logger).Log("msg", "SA NodeRecord table cut short; listing the ports one LID at a time", "selector", selector)
	case changed && c.Known:
		level.Info(logger).Log("msg", "SA NodeRecord table whole again", "selector", selector, "cut_refreshes", c.Count)
	}
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
	c, changed := l.failing.Observe(err != nil, now)
	if err == nil {
		if changed && c.Known {
			level.Info(logger).Log("msg", "discovery refresh recovered", "selector", selector,
				"failed_refreshes", c.Count, "failed_for", now.Sub(c.Since))
		}
		l.kind = ""
		return
	}
	kind := refreshFailureKind(err)
	level.Debug(logger).Log("msg", "discovery refresh failed", "selector", selector, "kind", kind, "err", err)
	switch {
	case changed:
		level.Warn(logger).Log("msg", "discovery refresh failing; keeping the previous destinations", "selector", selector,
			"kind", kind, "err", err)
	case kind != l.kind:
		_, since, count, _ := l.failing.Current()
		level.Warn(logger).Log("msg", "discovery refresh failure changed; keeping the previous destinations", "selector", selector,
			"kind", kind, "previous_kind", l.kind, "err", err, "failed_refreshes", count-1, "failed_for", now.Sub(since))
	}
	l.kind = kind
}
