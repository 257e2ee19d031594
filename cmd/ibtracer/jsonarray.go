package main

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"sync"
)

// writeJSONArray writes the n items item(0) .. item(n-1) exactly as
// encoding/json's Encoder with SetIndent("", "  ") writes the slice of
// them, but marshals the items on every processor at once: --all's
// JSON document of 128 traces took 4 to 5 ms of a 25 ms run on one
// (docs/architecture.md, "Facts shared by a run"); and it indents them
// itself (appendIndented), in a third of the time encoding/json's
// validating indenter takes. An item whose
// marshalling fails fails the whole document, as the Encoder's would,
// and nothing is written.
func writeJSONArray(w io.Writer, n int, item func(i int) any) error {
	if n == 0 {
		_, err := io.WriteString(w, "[]\n")
		return err
	}
	parts := make([][]byte, n)
	errs := make([]error, n)
	workers := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	for k := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := k; i < n; i += workers {
				// Within the array every line of an item is indented once
				// more: the prefix, after each of its newlines.
				var compact []byte
				if compact, errs[i] = json.Marshal(item(i)); errs[i] == nil {
					parts[i] = appendIndented(make([]byte, 0, 2*len(compact)), compact, "  ", "  ")
				}
			}
		}()
	}
	wg.Wait()
	size := 4
	for i, p := range parts {
		if errs[i] != nil {
			return errs[i]
		}
		size += len(p) + 4
	}
	var b bytes.Buffer
	b.Grow(size)
	b.WriteString("[\n")
	for i, p := range parts {
		b.WriteString("  ")
		b.Write(p)
		if i < n-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	_, err := w.Write(b.Bytes())
	return err
}

// appendIndented appends src, compact JSON as json.Marshal writes it,
// to dst as json.MarshalIndent(v, prefix, indent) would have written
// it: a newline, the prefix and one indent per level before every
// element and closing bracket of a non-empty object or array, ": "
// between a key and its value, strings copied as they are.
func appendIndented(dst, src []byte, prefix, indent string) []byte {
	depth := 0
	var margin []byte // a newline, the prefix and indents: its head is the margin at a depth
	newline := func() {
		n := 1 + len(prefix) + depth*len(indent)
		for len(margin) < n {
			if margin == nil {
				margin = append(append(margin, '\n'), prefix...)
			}
			margin = append(margin, indent...)
		}
		dst = append(dst, margin[:n]...)
	}
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			dst = append(dst, src[i:min(j+1, len(src))]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				dst = append(dst, src[i+1])
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
