package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// healthFlags are the path-health options (ibdiagpath's -lw, -ls, -pm and
// -P; ibqueryerrors' --threshold-file).
type healthFlags struct {
	on          bool
	expectWidth string
	expectSpeed string
	// hostWidth .. switchSpeed state them for one kind of link.
	hostWidth, hostSpeed, switchWidth, switchSpeed string
	pm                                             bool
	pmInterval                                     time.Duration
	ber                                            time.Duration // --ber WINDOW (ber.go)
	berTarget                                      float64
	threshold                                      string
	limits                                         []string
}

func addHealthFlags(app *kingpin.Application, f *healthFlags) {
	app.Flag("health", "Check the health of every link of the path: state, width, speed, MTU (and counters with --pm). Exit status 1 when a link is unhealthy.").BoolVar(&f.on)
	app.Flag("expect-width", "Links narrower than this (1x, 2x, 4x, 8x, 12x) are unhealthy (below_expected). Implies --health.").PlaceHolder("4x").StringVar(&f.expectWidth)
	app.Flag("expect-speed", "Links slower than this (SDR, DDR, QDR, FDR, EDR, HDR, NDR, XDR, or a lane rate in Gb/s) are unhealthy. Implies --health.").PlaceHolder("EDR").StringVar(&f.expectSpeed)
	app.Flag("expect-host-width", "As --expect-width, for host links only (a CA or router at one end), e.g. 2x for HDR100 hosts on split cables.").PlaceHolder("2x").StringVar(&f.hostWidth)
	app.Flag("expect-host-speed", "As --expect-speed, for host links only.").PlaceHolder("HDR").StringVar(&f.hostSpeed)
	app.Flag("expect-switch-width", "As --expect-width, for switch-to-switch links only.").PlaceHolder("4x").StringVar(&f.switchWidth)
	app.Flag("expect-switch-speed", "As --expect-speed, for switch-to-switch links only.").PlaceHolder("HDR").StringVar(&f.switchSpeed)
	app.Flag("pm", "Read the PerfMgt error counters at both ends of every link. Implies --health.").BoolVar(&f.pm)
	app.Flag("pm-interval", "Read the counters twice, this long apart, and judge their increments (default: judge the values of one reading). Implies --pm.").DurationVar(&f.pmInterval)
	addBERFlags(app, f) // ber.go
	app.Flag("threshold-file", "Counter limits in ibqueryerrors' --threshold-file format (CounterName=value lines). Implies --pm.").PlaceHolder("FILE").StringVar(&f.threshold)
	app.Flag("limit", "A counter limit, CounterName=value (repeatable; as ibdiagpath -P). A counter above it is unhealthy. Implies --pm.").PlaceHolder("SymbolErrorCounter=10").StringsVar(&f.limits)
}

// options turns the flags into linkhealth.Options; ok is false when
// health is off.
func (f *healthFlags) options() (o linkhealth.Options, ok bool, err error) {
	if f.pmInterval < 0 {
		return o, false, fmt.Errorf("--pm-interval %s is negative", f.pmInterval)
	}
	if err := f.berOptions(&o); err != nil { // ber.go
		return o, false, err
	}
	f.pm = f.pm || f.pmInterval > 0 || f.threshold != "" || len(f.limits) > 0
	f.on = f.on || f.pm || f.expectWidth != "" || f.expectSpeed != "" || f.hostWidth != "" || f.hostSpeed != "" ||
		f.switchWidth != "" || f.switchSpeed != ""
	if !f.on {
		return o, false, nil
	}
	if f.expectWidth != "" {
		if o.ExpectWidth, err = linkhealth.ParseWidth(f.expectWidth); err != nil {
			return o, false, fmt.Errorf("--expect-width: %v", err)
		}
	}
	if f.expectSpeed != "" {
		if o.ExpectSpeed, err = linkhealth.ParseSpeed(f.expectSpeed); err != nil {
			return o, false, fmt.Errorf("--expect-speed: %v", err)
		}
	}
	for _, k := range []struct {
		flag, width, speed string
		to                 *linkhealth.Expect
	}{{"host", f.hostWidth, f.hostSpeed, &o.HostLinks}, {"switch", f.switchWidth, f.switchSpeed, &o.SwitchLinks}} {
		if k.width != "" {
			if k.to.Width, err = linkhealth.ParseWidth(k.width); err != nil {
				return o, false, fmt.Errorf("--expect-%s-width: %v", k.flag, err)
			}
		}
		if k.speed != "" {
			if k.to.Speed, err = linkhealth.ParseSpeed(k.speed); err != nil {
				return o, false, fmt.Errorf("--expect-%s-speed: %v", k.flag, err)
			}
		}
	}
	o.Counters, o.Limits, o.DataCounters = f.pm, map[string]uint64{}, f.pm
	if f.threshold != "" {
		if err := linkhealth.LoadLimits(f.threshold, o.Limits); err != nil {
			return o, false, fmt.Errorf("--threshold-file: %v", err)
		}
	}
	for _, l := range f.limits {
		if err := linkhealth.ParseLimit(l, o.Limits); err != nil {
			return o, false, fmt.Errorf("--limit: %v", err)
		}
	}
	o.LimitValues = f.pmInterval == 0
	o.Share = time.Hour // within one run, every port is read once per reading
	return o, true, nil
}

// checkAll reads the health of every result's path (twice, pmInterval
// apart, with --pm-interval).
func checkAll(ctx context.Context, hc *linkhealth.Checker, rs []*trace.Result, pmInterval time.Duration, conc int) []*linkhealth.PathHealth {
	out := make([]*linkhealth.PathHealth, len(rs))
	pass := func() { each(len(rs), conc, func(i int) { out[i] = hc.Check(ctx, rs[i]) }) }
	pass()
	if pmInterval > 0 {
		time.Sleep(pmInterval) // the measurement interval the user asked for
		hc.Forget()
		pass()
	}
	return out
}

// healthExit is 1 (as ibdiagpath) for a traced path with an unhealthy
// link, unless the trace itself failed.
func healthExit(code int, ph *linkhealth.PathHealth) int {
	if code == exitOK && ph != nil && !ph.Healthy {
		return exitMismatch
	}
	return code
}

// healthSummary is the one-line health of a path.
func healthSummary(ph *linkhealth.PathHealth) string {
	if ph == nil {
		return ""
	}
	s := fmt.Sprintf("health: %s: bottleneck %s, MTU %d, %d degraded link(s)", map[bool]string{true: "ok", false: "UNHEALTHY"}[ph.Healthy],
		rate(ph.RateBits), ph.MTUBytes, ph.DegradedLinks)
	if ph.LinkErrors > 0 {
		s += fmt.Sprintf(", %d link errors", ph.LinkErrors)
	}
	if u := ph.Unhealthy(); len(u) > 0 {
		s += ": " + strings.Join(u, "; ")
	}
	return s
}

func rate(bits float64) string {
	if bits == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%g Gb/s", bits/1e9)
}

// writeHealthVerbose writes one line per link (-v).
func writeHealthVerbose(w io.Writer, ph *linkhealth.PathHealth) {
	if ph == nil {
		return
	}
	fmt.Fprintln(w, healthSummary(ph))
	for _, l := range ph.Links {
		fmt.Fprintf(w, "  link %d: %s[%d] -> %s[%d] %s %s %s", l.Hop, l.A.Label(), l.A.Port, l.B.Label(), l.B.Port,
			width(l.Width), l.Speed, rate(l.RateBits))
		fmt.Fprintf(w, " %s/%s %s/%s mtu %d %s", l.A.State, l.A.PhysState, l.B.State, l.B.PhysState, l.MTUBytes, l.Verdict)
		if l.Verdict == linkhealth.LinkWidthDegraded || l.Verdict == linkhealth.LinkSpeedDegraded {
			fmt.Fprintf(w, " (could be %s %s)", width(l.CouldBeWidth), l.CouldBeSpeed)
		}
		fmt.Fprint(w, counterColumn(l), congestionColumn(l), berColumn(l))
		fmt.Fprintln(w)
		writeEndDetails(w, l) // ber.go
		for _, e := range []*linkhealth.LinkEnd{&l.A, &l.B} {
			if e.Err != "" {
				fmt.Fprintf(w, "    %s[%d]: %s\n", e.Label(), e.Port, e.Err)
			}
		}
	}
}

func width(n int) string {
	if n == 0 {
		return "?X"
	}
	return fmt.Sprintf("%dX", n)
}

// counterColumn is the counters of a link: their increments, or the state
// that keeps them unknown.
func counterColumn(l linkhealth.Link) string {
	if l.A.Counters == nil && l.B.Counters == nil {
		return ""
	}
	var parts []string
	for _, e := range []struct {
		n string
		e *linkhealth.LinkEnd
	}{{"a", &l.A}, {"b", &l.B}} {
		c := e.e.Counters
		if c == nil {
			continue
		}
		switch c.State {
		case linkhealth.CountersOK, linkhealth.CountersSaturated:
			var inc []string
			for _, n := range linkhealth.CounterNames {
				if v := c.Increments[n]; v > 0 {
					inc = append(inc, fmt.Sprintf("%s+%d", n, v))
				}
			}
			s := fmt.Sprintf("%s: +0 in %.1fs", e.n, c.SinceSeconds)
			if len(inc) > 0 {
				s = fmt.Sprintf("%s: %s in %.1fs", e.n, strings.Join(inc, ","), c.SinceSeconds)
			}
			if c.State == linkhealth.CountersSaturated {
				s += " (saturated: " + strings.Join(c.Saturated, ",") + ")"
			}
			parts = append(parts, s)
		case linkhealth.CountersFirst:
			var v []string
			for _, n := range linkhealth.CounterNames {
				if c.Values[n] > 0 {
					v = append(v, fmt.Sprintf("%s=%d", n, c.Values[n]))
				}
			}
			if len(v) == 0 {
				v = append(v, "all 0")
			}
			parts = append(parts, e.n+": "+strings.Join(v, ","))
		case linkhealth.CountersReset:
			parts = append(parts, e.n+": counters went backwards (port reset or cleared): no increments")
		default:
			parts = append(parts, e.n+": counters unavailable: "+c.Err)
		}
	}
	s := " counters [" + strings.Join(parts, "; ") + "]"
	if len(l.OverLimit) > 0 {
		s += " OVER LIMIT " + strings.Join(l.OverLimit, ",")
	}
	return s
}

// jsonWithHealth is a trace's JSON with its path health.
type jsonWithHealth struct {
	trace.JSONResult
	Health *linkhealth.PathHealth `json:"health,omitempty"`
}
