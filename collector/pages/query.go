package pages

import (
	"errors"
	"fmt"
	"net/url"
	"sort"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// tracesQuery is what a /traces request asks for: the destinations named
// by ?destination= (none: all; repeated: the union), ?format= (html,
// json, or empty: as Accept says) and ?link= (only the destinations whose
// path crosses that link).
type tracesQuery struct {
	names  []string
	format string
	link   *trace.LinkRef // by name or GUID, resolved by the handler (tracesnames.go)
}

// parseTracesQuery parses a /traces query string strictly: a query that
// does not parse, a parameter other than destination, format and link, a
// format other than html or json, a link that is not GUID:PORT, or format
// or link given twice is an error, so
// that a filter the handler cannot read is refused rather than ignored
// (docs/architecture.md, "HTTP pages and logs").
func parseTracesQuery(raw string) (tracesQuery, error) {
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return tracesQuery{}, fmt.Errorf("bad query: %w", err)
	}
	var q tracesQuery
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same error for the same query
	for _, k := range keys {
		switch v := vals[k]; k {
		case "destination":
			q.names = v
		case "format":
			if q.format, err = parseFormat(v); err != nil {
				return tracesQuery{}, err
			}
		case "link":
			if q.link, err = parseLink(v); err != nil {
				return tracesQuery{}, err
			}
		default:
			return tracesQuery{}, fmt.Errorf("unknown parameter %s (want destination, format or link)", echoed(k))
		}
	}
	return q, nil
}

func parseFormat(v []string) (string, error) {
	if len(v) > 1 {
		return "", errors.New("format: given twice")
	}
	if v[0] != "html" && v[0] != "json" {
		return "", fmt.Errorf("format %s: want html or json", echoed(v[0]))
	}
	return v[0], nil
}

// echoed quotes s, a request's own text, for an error: cut by short to
// 64 bytes with its length said when longer (a 900 kB ?link= came back
// twice in a 1.8 MB answer).
func echoed(s string) string {
	if c := short(s); c != s {
		return fmt.Sprintf("%q (%d bytes)", c, len(s))
	}
	return fmt.Sprintf("%q", s)
}

// parseLink reads /traces?link=NODE:PORT, once, the node by name or GUID
// (trace.ParseLinkRef: the same reading as ibtracer --via).
func parseLink(v []string) (*trace.LinkRef, error) {
	if len(v) > 1 {
		return nil, errors.New("link: given twice (one link at a time)")
	}
	l, err := trace.ParseLinkRef(v[0])
	if err != nil {
		return nil, fmt.Errorf("link %w", err)
	}
	return &l, nil
}
