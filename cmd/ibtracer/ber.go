package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

// Bit error rates (docs/metrics.md, "Bit error rate"): --ber WINDOW reads
// the counters twice, WINDOW apart, as ibdiagnet's BER test does, and
// judges every link's BER over it against --ber-target.

func addBERFlags(app *kingpin.Application, f *healthFlags) {
	app.Flag("ber", "Read the counters twice, WINDOW apart, and judge every link's bit error rate over it (as ibdiagnet's BER test; "+
		"a window too short to tell the target says not yet known, unless its errors are already above it). Implies --pm.").PlaceHolder("WINDOW").DurationVar(&f.ber)
	app.Flag("ber-target", "The bit error rate a link may run at (default 1e-12, ibdiagnet's threshold).").PlaceHolder("1e-12").Float64Var(&f.berTarget)
}

// berOptions checks --ber and --ber-target and sets them into o; --ber
// is a --pm-interval.
func (f *healthFlags) berOptions(o *linkhealth.Options) error {
	if f.ber < 0 {
		return fmt.Errorf("--ber %s is negative", f.ber)
	}
	if f.berTarget < 0 || f.berTarget >= 1 {
		return fmt.Errorf("--ber-target %g is not a rate between 0 and 1", f.berTarget)
	}
	if f.ber > 0 {
		if f.pmInterval > 0 && f.pmInterval != f.ber {
			return fmt.Errorf("--ber %s and --pm-interval %s: one window, please", f.ber, f.pmInterval)
		}
		f.pmInterval = f.ber
	}
	o.BERTarget = f.berTarget
	return nil
}

// berColumn is a link's BER over its window, by the worse end.
func berColumn(l linkhealth.Link) string {
	switch l.BERState {
	case "":
		return ""
	case linkhealth.BERNotYetKnown:
		if l.BERWindowSeconds == 0 {
			return " BER not yet known (one reading: --ber WINDOW reads two)"
		}
		need := ""
		if l.RateBits > 0 {
			need = fmt.Sprintf("; %s needs %s", fmtBER(l.BERTarget), time.Duration(1/l.BERTarget/l.RateBits*float64(time.Second)).Round(time.Second))
		}
		return fmt.Sprintf(" BER not yet known (window %.0fs%s)", l.BERWindowSeconds, need)
	}
	return fmt.Sprintf(" BER %s at %s over %.0fs (target %s): %s", fmtBER(l.BER), l.BEREnd, l.BERWindowSeconds,
		fmtBER(l.BERTarget), l.BERState)
}

func fmtBER(v float64) string { return fmt.Sprintf("%.2g", v) }

// writeEndDetails writes, per end of l, the extended data counters, the
// error details and the FEC blocks read (-v).
func writeEndDetails(w io.Writer, l linkhealth.Link) {
	for _, e := range []*linkhealth.LinkEnd{&l.A, &l.B} {
		c := e.Counters
		if c == nil {
			continue
		}
		var parts []string
		if len(c.Data) > 0 {
			parts = append(parts, "extended "+kv(c.Data, false))
		}
		if c.RcvErrorDetails != nil {
			parts = append(parts, "rcv error details "+kv(c.RcvErrorDetails, true))
		}
		if c.XmitDiscardDetails != nil {
			parts = append(parts, "xmit discard details "+kv(c.XmitDiscardDetails, true))
		}
		if c.DetailsErr != "" {
			parts = append(parts, "details: "+c.DetailsErr)
		}
		if f := c.FEC; f != nil {
			parts = append(parts, fecText(f))
		}
		if b := c.BER; b != nil && b.WindowSeconds > 0 {
			parts = append(parts, fmt.Sprintf("BER %s (%d symbol errors in %.3g bits over %.0fs)", fmtBER(b.BER),
				b.SymbolErrors, b.Bits, b.WindowSeconds))
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "    %s[%d]: %s\n", e.Label(), e.Port, strings.Join(parts, "; "))
		}
	}
}

func fecText(f *linkhealth.FECReading) string {
	if f.Err != "" {
		return "FEC: " + f.Err
	}
	mode := "FEC"
	if f.RSFEC {
		mode = "RS-FEC"
	}
	s := fmt.Sprintf("%s blocks corrected %d, uncorrectable %d", mode, f.Corrected, f.Uncorrectable)
	if f.Known {
		s += fmt.Sprintf(" (+%d, +%d)", f.CorrectedInc, f.UncorrectableInc)
	}
	return s
}

// kv writes a counter map in name order; nonZero leaves out the zeros
// ("all 0" when nothing is left).
func kv(m map[string]uint64, nonZero bool) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if !nonZero || v != 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "all 0"
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(keys, ",")
}
