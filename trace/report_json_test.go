package trace

import (
	"encoding/json"
	"io"
)

// The JSON report the tests read back: results as an array, as ibtracer
// -j prints them.

// WriteJSON writes results as a JSON array.
func WriteJSON(w io.Writer, rs []*Result) error {
	out := make([]JSONResult, len(rs))
	for i, r := range rs {
		out[i] = r.JSON()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
