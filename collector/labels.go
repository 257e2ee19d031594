package collector

import (
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The per-destination series are many (tens per destination) and mostly
// share their labels. Building them with prometheus.MustNewConstMetric
// allocated every label pair of every series on every scrape: about 27 MB
// per scrape at 1,000 destinations. Instead each destination keeps its
// label pairs (built once) and a scrape allocates only the samples. The
// per-hop series, a few per hop, build theirs when they are written
// (hopSample), from pairs shared where the values are few.

// labelSet is a metric's label pairs, sorted by name, as dto.Metric holds
// them. It is shared by every scrape and never modified.
type labelSet []*dto.LabelPair

func pair(name, value string) *dto.LabelPair { return &dto.LabelPair{Name: &name, Value: &value} }

// sharedPairs are the label pairs of few values (a hop number, a port
// number, a node type, a verdict), one per name and value, shared by
// every series that has one: half of a hop's label sets are pairs like
// these.
var sharedPairs sync.Map // [2]string → *dto.LabelPair

// sharedPair is pair(name, value), shared. Only for labels whose values
// are bounded (a port or hop number, an enumeration): the pairs are never
// freed.
func sharedPair(name, value string) *dto.LabelPair {
	k := [2]string{name, value}
	if p, ok := sharedPairs.Load(k); ok {
		return p.(*dto.LabelPair)
	}
	p, _ := sharedPairs.LoadOrStore(k, pair(name, value))
	return p.(*dto.LabelPair)
}

// newLabelSet pairs names with values.
func newLabelSet(names, values []string) labelSet {
	l := make(labelSet, len(names))
	for i := range names {
		l[i] = pair(names[i], values[i])
	}
	sort.Slice(l, func(i, j int) bool { return l[i].GetName() < l[j].GetName() })
	return l
}

// with returns a new set: l plus extra.
func (l labelSet) with(extra ...*dto.LabelPair) labelSet {
	out := make(labelSet, 0, len(l)+len(extra))
	out = append(append(out, l...), extra...)
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

// sample is a gauge or counter sample with a shared label set.
type sample struct {
	desc   *prometheus.Desc
	labels labelSet
	typ    prometheus.ValueType
	val    float64
}

func (m *sample) Desc() *prometheus.Desc { return m.desc }

func (m *sample) Write(out *dto.Metric) error {
	out.Label = m.labels
	v := m.val
	if m.typ == prometheus.CounterValue {
		out.Counter = &dto.Counter{Value: &v}
	} else {
		out.Gauge = &dto.Gauge{Value: &v}
	}
	return nil
}
