package collector

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// traceReasons reads every Reason constant trace declares, from its
// source: a reason added there must be counted here.
func traceReasons(t *testing.T) map[string]trace.Reason {
	t.Helper()
	out := map[string]trace.Reason{}
	for name, v := range traceConsts(t, "Reason") {
		out[name] = trace.Reason(v)
	}
	return out
}

// traceConsts reads every string constant of type typ that trace/types.go
// declares, by name.
func traceConsts(t *testing.T, typ string) map[string]string {
	t.Helper()
	fs := token.NewFileSet()
	f, err := parser.ParseFile(fs, filepath.Join("..", "trace", "types.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != typ {
				continue
			}
			for i, n := range vs.Names {
				v, err := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				out[n.Name] = v
			}
		}
	}
	if len(out) < 5 {
		t.Fatalf("found only %d %s constants in trace/types.go: %v", len(out), typ, out)
	}
	return out
}

// TestEveryTraceReasonIsCounted: every failure reason trace can return
// is a label value of trace_failures_total and counts against the
// destination, except the device's (a skipped trace, counted in
// traces_skipped_total) and the empty reason of a success.
func TestEveryTraceReasonIsCounted(t *testing.T) {
	for name, rs := range traceReasons(t) {
		if rs == trace.ReasonNone || rs == trace.ReasonDevice {
			continue
		}
		if reasonIndex(rs) < 0 {
			t.Errorf("trace.%s (%q) is not in allReasons: its failures would be counted nowhere", name, rs)
			continue
		}
		s := newDestState(config.Destination{Name: "d", LID: 5}, nil, nil)
		s.record(&trace.Result{Status: trace.StatusResolve, Reason: rs, Start: time.Now()})
		if s.failures == nil || s.failures[reasonIndex(rs)] != 1 {
			t.Errorf("trace.%s (%q): a failure is not counted", name, rs)
		}
	}
}

// TestEveryTraceStatusIsCounted: every status a trace can end with is a
// result of traces_total, except the device's (a skipped trace).
func TestEveryTraceStatusIsCounted(t *testing.T) {
	for name, v := range traceConsts(t, "Status") {
		if st := trace.Status(v); st != trace.StatusDevice && resultIndex(st) < 0 {
			t.Errorf("trace.%s (%q) is not in allResults: such traces would be counted nowhere", name, v)
		}
	}
}
