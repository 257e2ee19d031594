package config

import (
	"fmt"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ibtracer/ibtracer_exporter/internal/strictint"
)

// intKey is the range of an integer key; msg, when set, is the error for
// a value outside it, with the value as written (default "%s: want
// min..max").
type intKey struct {
	min int64
	max uint64
	msg string
}

// intKeys are the integer keys of the file, by path: a list's items are
// "[]", a map's keys "*". yaml would truncate 12.9 to 12 and read 017 as
// 15; every integer key is read here first, strictly (internal/strictint),
// and checked against its range, before the file is decoded. An explicit
// 0 where 0 is not valid is refused, not taken as "the default".
// TestEveryIntegerKeyHasARange keeps this list complete.
var intKeys = map[string]intKey{
	"retries":               {min: 0, max: 10},
	"concurrency":           {min: 1, max: 4096},
	"mad_window":            {min: 1, max: 65536},
	"mad_window_per_target": {min: 1, max: 65536},
	"sl":                    {min: 0, max: 15},
	"destinations[].lid":    {min: 1, max: 0xBFFF, msg: "%s is not a unicast LID (1..49151)"},
	"destinations[].port":   {min: 1, max: 254, msg: "%s is not a port number (1..254)"},
	"discover[].sample":     {min: 0, max: 100000, msg: "%s: want 0 (every port) .. 100000"},
	"health.limits.*":       {min: 0, max: math.MaxUint64},
	"health.xmit_wait_tick_symbols": {min: 1, max: 256,
		msg: "%s: want a PortXmitWait tick in symbol times, 1..256 (PortSamplesControl Tick + 1)"},
	"evidence.max_links": {min: 1, max: 1000000},
}

// checkIntegers finds the first integer key of the document root whose
// value is not an integer in its range. Values yaml does not read as
// numbers (a string, a mapping) are left to the decoder's messages.
func checkIntegers(file string, root *yaml.Node) error {
	var walk func(n *yaml.Node, path, field string) error
	walk = func(n *yaml.Node, path, field string) error {
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for i, c := range n.Content {
				p, f := path, field
				if n.Kind == yaml.SequenceNode {
					p, f = path+"[]", itemField(field, i, c)
				}
				if err := walk(c, p, f); err != nil {
					return err
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p, f := join(path, k.Value), join(field, k.Value)
				if r, ok := lookupIntKey(path, p); ok && v.Kind == yaml.ScalarNode {
					if err := r.check(file, k.Line, f, v); err != nil {
						return err
					}
					continue
				}
				if err := walk(v, p, f); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(root, "", "")
}

// lookupIntKey finds the range of the key at path (parent: its mapping's).
func lookupIntKey(parent, path string) (intKey, bool) {
	if r, ok := intKeys[path]; ok {
		return r, true
	}
	r, ok := intKeys[join(parent, "*")]
	return r, ok
}

// check reads v, the value of the integer key field on line.
func (r intKey) check(file string, line int, field string, v *yaml.Node) error {
	if v.Tag != "!!int" && v.Tag != "!!float" {
		return nil
	}
	n, err := strictint.Parse(v.Value)
	if err != nil {
		return &Error{File: file, Line: line, Field: field, Msg: strictint.Message(v.Value, err)}
	}
	if strictint.InRange(n, r.min, r.max) {
		return nil
	}
	msg := fmt.Sprintf("%s: want %d..%d", v.Value, r.min, r.max)
	if r.msg != "" {
		msg = fmt.Sprintf(r.msg, v.Value)
	}
	return &Error{File: file, Line: line, Field: field, Msg: msg}
}

// itemField names item i of the list field as validation does:
// "destinations[2] (name)" when the item has a name.
func itemField(field string, i int, item *yaml.Node) string {
	f := fmt.Sprintf("%s[%d]", field, i)
	if field != "destinations" || item.Kind != yaml.MappingNode {
		return f
	}
	for k := 0; k+1 < len(item.Content); k += 2 {
		if item.Content[k].Value == "name" && item.Content[k+1].Value != "" {
			return fmt.Sprintf("%s (%s)", f, item.Content[k+1].Value)
		}
	}
	return f
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return strings.Join([]string{path, key}, ".")
}
