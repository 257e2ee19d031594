package config

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Error is a configuration error with its position.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Check reads and validates the configuration file at path, as Load does,
// and returns the first error; it prints nothing. It is the exporter's
// --config.check.
func Check(path string) error {
	_, err := Load(path)
	return err
}

// The mappings of the file, by the Go type yaml names in its errors: what
// the message calls them and their keys, in file order.
var mappings = map[string]struct {
	where string
	keys  []string
}{
	typeName(Config{}):      {"", yamlKeys(Config{})},
	typeName(AgentConfig{}): {" in agent", yamlKeys(AgentConfig{})},
	typeName(Destination{}): {" in a destination", yamlKeys(Destination{})},
	typeName(Selector{}):    {" in a discover selector", yamlKeys(Selector{})},
}

func typeName(v any) string { return reflect.TypeOf(v).String() }

func yamlKeys(v any) []string {
	var keys []string
	t := reflect.TypeOf(v)
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	return keys
}

var (
	unknownRe = regexp.MustCompile(`^field (.+) not found in type (\S+)$`)
	typeRe    = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")
)

// friendly rewrites one of yaml's decoding messages without Go type
// names: an unknown key with the closest valid one, a value of the wrong
// kind with the key it is the value of (keyAt: the key whose value is on
// a line).
func friendly(msg string, line int, keyAt map[int]string) string {
	if m := unknownRe.FindStringSubmatch(msg); m != nil {
		mp, ok := mappings[m[2]]
		if !ok {
			return fmt.Sprintf("unknown key `%s`", m[1])
		}
		if s := suggest(m[1], mp.keys); s != "" {
			return fmt.Sprintf("unknown key `%s`%s (did you mean `%s`?)", m[1], mp.where, s)
		}
		return fmt.Sprintf("unknown key `%s`%s (valid keys: %s)", m[1], mp.where, strings.Join(mp.keys, ", "))
	}
	if m := typeRe.FindStringSubmatch(msg); m != nil {
		want := kindOf(m[3])
		key := keyAt[line]
		if key != "" {
			key += ": "
		}
		if m[2] == "" || m[1] == "map" || m[1] == "seq" {
			return fmt.Sprintf("%sa %s where %s is wanted", key, nodeKind(m[1]), want)
		}
		return fmt.Sprintf("%s%q is not %s", key, m[2], want)
	}
	return msg
}

func nodeKind(tag string) string {
	switch tag {
	case "map":
		return "mapping"
	case "seq":
		return "list"
	}
	return "value"
}

// kindOf names what a Go type accepts, for a person.
func kindOf(goType string) string {
	switch {
	case goType == "bool" || goType == "*bool":
		return "true or false"
	case strings.HasPrefix(strings.TrimPrefix(goType, "*"), "int"):
		return "an integer"
	case goType == "uint8":
		return "an integer between 0 and 255"
	case goType == "uint16":
		return "an integer between 0 and 65535"
	case strings.HasPrefix(goType, "uint"):
		return "a non-negative integer"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	}
	return "a mapping of keys"
}

// suggest returns the key of keys closest to k, or "" when none is close:
// at most one edit away for a short key, two for one of five letters or
// more (case is ignored).
func suggest(k string, keys []string) string {
	limit := 0
	switch {
	case len(k) >= 5:
		limit = 2
	case len(k) >= 3:
		limit = 1
	}
	best, bestD := "", limit+1
	for _, c := range keys {
		if d := editDistance(strings.ToLower(k), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// valueLines maps the line of every scalar value to its key's path
// ("retries", "agent.burst", "destinations[2].lid").
func valueLines(b []byte) map[int]string {
	out := map[int]string{}
	var root yaml.Node
	if yaml.Unmarshal(b, &root) != nil {
		return out
	}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				p := n.Content[i].Value
				if path != "" {
					p = path + "." + p
				}
				walk(n.Content[i+1], p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		default:
			if _, seen := out[n.Line]; !seen {
				out[n.Line] = path
			}
		}
	}
	walk(&root, "")
	return out
}

var indentHint = []string{"did not find expected", "mapping values are not allowed", "block sequence entries are not allowed"}

// syntaxLine finds the line a syntax error is on. yaml reports the line
// where the enclosing block starts (so a bad indent on line 7 of an agent:
// block that starts on line 4 says line 4); the first prefix of the file
// that fails with the same message ends on the offending line.
func syntaxLine(b []byte, line int, msg string) int {
	lines := bytes.SplitAfter(b, []byte("\n"))
	fails := func(k int) bool {
		var n yaml.Node
		err := yaml.Unmarshal(bytes.Join(lines[:k], nil), &n)
		if err == nil {
			return false
		}
		m := lineRe.FindStringSubmatch(err.Error())
		return m != nil && m[2] == msg
	}
	lo, hi := max(line, 1), len(lines)
	if lo > hi || !fails(hi) {
		return line
	}
	for lo < hi { // the smallest failing prefix, assuming longer ones fail too
		mid := (lo + hi) / 2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// syntaxError is file:line: msg for a yaml syntax error.
func syntaxError(file string, b []byte, line int, msg string) *Error {
	at := syntaxLine(b, line, msg)
	for _, h := range indentHint {
		if strings.HasPrefix(msg, h) {
			msg += " (is the indentation right?)"
			break
		}
	}
	return &Error{File: file, Line: at, Msg: msg}
}

// decodeError turns an error of yaml's decoder into file:line: msg.
func decodeError(file string, b []byte, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		if m := lineRe.FindStringSubmatch(te.Errors[0]); m != nil {
			n, _ := strconv.Atoi(m[1])
			return &Error{File: file, Line: n, Msg: friendly(m[2], n, valueLines(b))}
		}
		return &Error{File: file, Msg: te.Errors[0]}
	}
	if m := lineRe.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return syntaxError(file, b, n, m[2])
	}
	return &Error{File: file, Msg: err.Error()}
}
