package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReloadEndlessNodeNameMap: a running exporter asked to reload a file
// whose node_name_map is /dev/zero refuses it with the file and the bound
// named, keeps its configuration and keeps serving (it was killed by
// memory exhaustion).
func TestReloadEndlessNodeNameMap(t *testing.T) {
	skipShort(t)
	p := startExporter(t, nil, "interval: 1s\ndestinations:\n  - {name: two, lid: 9}\n", "--ib.transport=sim")
	p.waitFor(20*time.Second, "first traces", allTraced("two"))
	p.writeConfig("interval: 1s\nnode_name_map: /dev/zero\ndestinations:\n  - {name: two, lid: 9}\n  - {name: three, lid: 10}\n")
	code, msg := p.post("/-/reload")
	want := "ibtracer.yml:2: node_name_map: /dev/zero: larger than 32 MiB, the most a node-name-map may hold"
	if code != 500 || !strings.Contains(msg, want) {
		t.Fatalf("reload: %d %q, want 500 and %q", code, msg, want)
	}
	b := p.waitFor(5*time.Second, "reload gauge 0", func(b string) bool {
		v, ok := value(b, "ibtracer_config_last_reload_successful")
		return ok && v == 0
	})
	if v, _ := value(b, "ibtracer_destinations"); v != 1 {
		t.Fatalf("%v destinations after the refused reload: the old configuration was not kept", v)
	}
	if !strings.Contains(p.Logs(), want) {
		t.Fatalf("the log does not say why:\n%s", p.Logs())
	}
}

// TestWebConfigEndless: --web.config.file=/dev/zero stops the exporter at
// start-up with exit 1 and an error naming the file (it was killed by
// memory exhaustion); so does a file one byte over the bound, naming the
// bound, and a FIFO, at once (it blocked the start for ever in open(2)).
func TestWebConfigEndless(t *testing.T) {
	skipShort(t)
	bin, _ := binaries(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ibtracer.yml")
	if err := os.WriteFile(cfg, []byte("interval: 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "web.yml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1<<20 + 1); err != nil { // sparse
		t.Fatal(err)
	}
	f.Close()
	fifo := filepath.Join(dir, "web-fifo.yml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ web, want string }{
		{"/dev/zero", "/dev/zero: not a regular file but a device; a web configuration file must be a regular file"},
		{big, big + ": larger than 1 MiB, the most a web configuration file may hold"},
		{fifo, fifo + ": not a regular file but a named pipe; a web configuration file must be a regular file"},
	} {
		t.Run(filepath.Base(c.web), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "--config.file="+cfg, "--web.listen-address="+freePort(t),
				"--ib.transport=sim", "--web.config.file="+c.web)
			cmd.Dir = dir
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			start := time.Now()
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), c.want) {
				t.Fatalf("exit %v after %v, want 1 and %q in:\n%s", err, time.Since(start), c.want, out)
			}
		})
	}
}
