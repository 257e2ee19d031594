package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

// indentCases are values whose indented JSON appendIndented must write
// as encoding/json does: empty and nested objects and arrays, and
// strings holding what a scanner could take for structure (quotes,
// backslashes, brackets, commas, colons, HTML, any UTF-8 or invalid
// byte).
func indentCases() []any {
	tricky := []string{"", `"`, `\`, `\"`, `"\\"`, "{}", "[]", ",:", `{"a":[1,2]}`, "<a&b>", "é\u2028\x00\xff", "\\\\\""}
	var cs []any
	for _, s := range tricky {
		cs = append(cs, s, map[string]any{s: s, "x": []any{s, map[string]any{}, []any{}}},
			[]any{map[string]any{"k": []any{[]any{}, nil, 1.5, true}}, s})
	}
	return append(cs, map[string]any{}, []any{}, nil, 0, struct {
		A []int          `json:"a"`
		B map[string]int `json:"b"`
		C *int           `json:"c"`
	}{A: []int{}, B: map[string]int{}})
}

// TestIndentedAsEncodingJSON: appendIndented of json.Marshal's output
// equals json.MarshalIndent's, byte for byte.
func TestIndentedAsEncodingJSON(t *testing.T) {
	for _, v := range indentCases() {
		checkIndented(t, v)
	}
}

func checkIndented(t *testing.T, v any) {
	t.Helper()
	compact, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.MarshalIndent(v, "  ", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if got := appendIndented(nil, compact, "  ", "  "); !bytes.Equal(got, want) {
		t.Fatalf("%#v:\ngot  %q\nwant %q", v, got, want)
	}
}

// FuzzIndentedAsEncodingJSON: the same for any string, as key and value
// at several depths.
func FuzzIndentedAsEncodingJSON(f *testing.F) {
	for _, s := range []string{"", `"`, `\`, "{[,:]}", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkIndented(t, map[string]any{s: []any{s, map[string]any{s: s, "": []any{}}}, "z": s})
	})
}
