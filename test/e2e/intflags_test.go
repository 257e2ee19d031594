package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestExporterIntegerFlagsStrict: the exporter refuses a fraction or an
// out-of-range value for an integer flag at start-up (exit 1, the flag
// named) instead of running with it truncated.
func TestExporterIntegerFlagsStrict(t *testing.T) {
	skipShort(t)
	bin, _ := binaries(t)
	dir := t.TempDir()
	cfg := dir + "/ibtracer.yml"
	if err := os.WriteFile(cfg, []byte("interval: 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ arg, want string }{
		{"--web.max-requests=2.5", "--web.max-requests 2.5 is not an integer"},
		{"--web.max-requests=-1", "--web.max-requests -1: want 0..10000"},
		{"--web.max-connections=1.5", "--web.max-connections 1.5 is not an integer"},
		{"--ib.port=1.5", "--ib.port 1.5 is not an integer"},
		{"--sim.lmc=9", "--sim.lmc 9: want 0..7"},
	} {
		t.Run(strings.TrimLeft(tc.arg, "-"), func(t *testing.T) {
			// Bounded: an exporter that accepted the flag would serve until
			// the context ends.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "--config.file="+cfg, "--web.listen-address="+freePort(t),
				"--ib.transport=sim", tc.arg)
			cmd.Dir = dir
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if ctx.Err() != nil || !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), tc.want) {
				t.Fatalf("%v (context: %v), want exit 1 and %q in:\n%s", err, ctx.Err(), tc.want, out)
			}
		})
	}
}
