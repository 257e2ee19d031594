package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// output is what a run prints, in each form ibtracer prints it.
type output struct {
	n    int        // items (traces, or path sets)
	json func() any // the whole run, one JSON document
	// jsonItem, when set, is item i of that document, a JSON array:
	// the items are then marshalled at once (jsonarray.go).
	jsonItem func(i int) any
	verbose  func(w io.Writer, i int) // item i in full
	summary  func(w io.Writer, i int) // item i in short
	totals   []*trace.Result          // what --all counts
	mads     runMADs                  // the MADs the run sent, for --all's totals
}

// print writes out in the form o asks for: one indented JSON document,
// every item in full a blank line apart (-v), or each in short; then,
// with --all, the totals line (on stderr under JSON: stdout stays one
// JSON document). ok is false when the output could not be written.
//
// stdout is buffered: the items are all known by now, and a write per
// line was a system call per trace (about a tenth of a short --all
// run's).
func (out *output) print(o *options, stdout, stderr io.Writer) (ok bool) {
	buf := bufio.NewWriterSize(stdout, 64<<10)
	ok = out.write(o, buf, stderr)
	if o.all && o.format != "json" {
		fmt.Fprintln(buf, totalsOf(out.totals, out.mads))
	}
	if err := buf.Flush(); err != nil {
		if ok { // else write said why already: the same error
			fmt.Fprintf(stderr, "ibtracer: writing the output: %v\n", err)
		}
		return false
	}
	if o.all && o.format == "json" {
		fmt.Fprintln(stderr, totalsOf(out.totals, out.mads))
	}
	return ok
}

// write is print's items, into stdout's buffer; ok is false when the
// JSON could not be made or written (the reason on stderr).
func (out *output) write(o *options, stdout *bufio.Writer, stderr io.Writer) (ok bool) {
	switch {
	case o.format == "json" && out.jsonItem != nil:
		if err := writeJSONArray(stdout, out.n, out.jsonItem); err != nil {
			fmt.Fprintf(stderr, "ibtracer: %v\n", err)
			return false
		}
	case o.format == "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out.json()); err != nil {
			fmt.Fprintf(stderr, "ibtracer: %v\n", err)
			return false
		}
	case o.verbose:
		for i := range out.n {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			out.verbose(stdout, i)
		}
	default:
		for i := range out.n {
			out.summary(stdout, i)
		}
	}
	return true
}
