package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// The flags mean what the exporter's configuration means by the same
// knobs (config.TraceOptions): --retries 0 sends each MAD once, and the
// defaults are the engine's (one default MAD timeout everywhere).
func TestFlagsAsTraceOptions(t *testing.T) {
	none := (&options{retries: 0, timeoutMS: 250}).traceOptions(ibmad.OUIOpenIB)
	if !none.NoRetry || none.Timeout != 250*time.Millisecond {
		t.Errorf("--retries 0 --timeout 250: %+v; want NoRetry and 250ms", none)
	}
	three := (&options{retries: 3, timeoutMS: 1}).traceOptions(ibmad.OUIOpenIB)
	if three.NoRetry || three.Retries != 3 {
		t.Errorf("--retries 3: %+v", three)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"--help"}, &out, &errb); code != trace.ExitOK {
		t.Fatalf("--help: exit %d %s", code, errb.String())
	}
	for _, want := range []string{
		fmt.Sprintf("--timeout=%d ", ibmad.DefaultTimeout/time.Millisecond),
		fmt.Sprintf("--retries=%d ", ibmad.DefaultRetries),
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help does not show the default %q:\n%s", want, out.String())
		}
	}
}
