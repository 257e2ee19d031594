package collector

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/localize"
)

// Bit error rates (docs/metrics.md, "Bit error rate"): per link end whose
// counters moved, the symbol errors and the bits the link carried, as
// counters, so that rules compute a BER over any window; the FEC blocks
// where the port counts them; the targets per kind of link.

var (
	berLabels         = append(append([]string{}, linkLabels...), "end", "kind")
	dLinkSymbolErrors = desc("link_symbol_errors_total", "SymbolErrorCounter increments at one end of the link (end: local is "+
		"node_guid/port, remote remote_node_guid/remote_port) since this exporter first read it; only for link ends "+
		"whose symbol errors or uncorrectable FEC blocks rose.", berLabels...)
	dLinkBERBits = desc("link_ber_bits_total", "Bits the link carried at that end since the reading before its first symbol error "+
		"(or uncorrectable FEC block): its width × lane rate × the time between readings. increase(link_symbol_errors_total) / increase(link_ber_bits_total) is its BER over a window.", berLabels...)
	dLinkFECCorrected = desc("link_fec_corrected_blocks_total", "FEC blocks corrected at that end since this exporter first "+
		"read PortExtendedSpeedsCounters there (FDR and faster).", berLabels...)
	dLinkFECUncorrectable = desc("link_fec_uncorrectable_blocks_total", "FEC blocks that could not be corrected at that end "+
		"since this exporter first read PortExtendedSpeedsCounters there.", berLabels...)
	dBERTarget = desc("link_ber_target", "The bit error rate a kind of link may run at: severity warning over 125 minutes, "+
		"critical over 12 minutes (health: ber_target, ber_critical).", "kind", "severity")
)

// berEnd is the newest reading of one port, and a link it is an end of.
type berEnd struct {
	r    *linkhealth.PortCounterReading
	link *linkhealth.Link
}

// collectBER emits the BER series of paths' link ends whose counters
// moved (and the targets); it returns their links, whose ends
// link_info names (linkinfo.go).
func collectBER(ch chan<- prometheus.Metric, paths []*linkhealth.PathHealth, targets map[string]config.BERTargets) (moved []*linkhealth.Link) {
	if targets == nil {
		return nil
	}
	for _, kind := range []string{linkhealth.KindHost, linkhealth.KindSwitch} {
		t := targets[kind]
		ch <- prometheus.MustNewConstMetric(dBERTarget, prometheus.GaugeValue, t.Target, kind, "warning")
		ch <- prometheus.MustNewConstMetric(dBERTarget, prometheus.GaugeValue, t.Critical, kind, "critical")
	}
	// Each port's newest reading: a destination traced earlier in the
	// interval holds an older one, and a counter must not go back.
	type portKey struct {
		guid ibmad.GUID
		port uint8
	}
	ends := map[portKey]berEnd{}
	for _, ph := range paths {
		if ph == nil {
			continue
		}
		for i := range ph.Links {
			l := &ph.Links[i]
			for _, e := range []*linkhealth.LinkEnd{&l.A, &l.B} {
				c := e.Counters
				if c == nil || c.BER == nil || !berMoved(c) {
					continue
				}
				k := portKey{e.NodeGUID, e.Port}
				if old, ok := ends[k]; !ok || c.At().After(old.r.At()) {
					ends[k] = berEnd{c, l}
				}
			}
		}
	}
	keys := make([]portKey, 0, len(ends))
	for k := range ends {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].guid < keys[j].guid || (keys[i].guid == keys[j].guid && keys[i].port < keys[j].port)
	})
	seen := map[*linkhealth.Link]bool{}
	for _, k := range keys {
		e := ends[k]
		l := e.link
		lk := localize.NewLink(l.A.NodeGUID, l.A.Port, l.B.NodeGUID, l.B.Port)
		end := "remote"
		if lk.NodeGUID == k.guid && lk.Port == k.port {
			end = "local"
		}
		lv := append(lk.Labels(), end, l.Kind)
		b := e.r.BER
		ch <- prometheus.MustNewConstMetric(dLinkSymbolErrors, prometheus.CounterValue, float64(b.TotalSymbolErrors), lv...)
		ch <- prometheus.MustNewConstMetric(dLinkBERBits, prometheus.CounterValue, b.TotalBits, lv...)
		if f := e.r.FEC; f != nil && f.Err == "" {
			ch <- prometheus.MustNewConstMetric(dLinkFECCorrected, prometheus.CounterValue, float64(f.TotalCorrected), lv...)
			ch <- prometheus.MustNewConstMetric(dLinkFECUncorrectable, prometheus.CounterValue, float64(f.TotalUncorrectable), lv...)
		}
		if !seen[l] {
			seen[l] = true
			moved = append(moved, l)
		}
	}
	return moved
}

// berMoved says whether an end's symbol errors or uncorrectable FEC
// blocks rose since the exporter first read it. Corrected blocks alone
// do not count: RS-FEC corrects blocks all the time on a healthy HDR link.
func berMoved(c *linkhealth.PortCounterReading) bool {
	return c.BER.TotalSymbolErrors > 0 || (c.FEC != nil && c.FEC.TotalUncorrectable > 0)
}
