// Package build checks what `make build` ships: both binaries, static
// (no cgo, no dynamic loader, no shared libraries), stamped with the
// version, revision, branch and build date given to make, which
// --version and the ibtracer_build_info metric show.
package build

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	version   = "9.8.7-buildtest"
	revision  = "0123456789abcdef0123456789abcdef01234567"
	branch    = "build-test-branch"
	buildDate = "20260102-03:04:05"
)

// makeBuild runs `make build` from the repository root into a temp dir.
func makeBuild(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binaries: not in -short")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-C", "../..", "build", "BINDIR="+dir, "VERSION="+version,
		"REVISION="+revision, "BRANCH="+branch, "BUILD_DATE="+buildDate)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	return dir
}

func TestMakeBuild(t *testing.T) {
	dir := makeBuild(t)
	for _, name := range []string{"ibtracer_exporter", "ibtracer", "ibtracer-fabric"} {
		bin := filepath.Join(dir, name)
		t.Run(name, func(t *testing.T) {
			checkStatic(t, bin)
			out, err := exec.Command("go", "version", "-m", bin).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "build\tCGO_ENABLED=0") {
				t.Fatalf("go version -m %s: %v\n%s", bin, err, out)
			}
			out, err = exec.Command(bin, "--version").CombinedOutput()
			want := fmt.Sprintf("%s, version %s (branch: %s, revision: %s)", name, version, branch, revision)
			if err != nil || !strings.Contains(string(out), want) || !strings.Contains(string(out), "build date:       "+buildDate) {
				t.Fatalf("%s --version: %v\n%s\nwant %q and build date %s", name, err, out, want, buildDate)
			}
		})
	}
	t.Run("config.check", func(t *testing.T) { checkConfig(t, filepath.Join(dir, "ibtracer_exporter")) })
	t.Run("build_info", func(t *testing.T) { checkBuildInfo(t, filepath.Join(dir, "ibtracer_exporter")) })
}

// checkStatic: no program interpreter (PT_INTERP) and no shared library
// (DT_NEEDED), which is what a cgo or dynamically linked build has.
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Fatalf("%s has a %v program header: not static", bin, p.Type)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) != 0 {
		t.Fatalf("%s needs shared libraries %v", bin, libs)
	}
}

// checkConfig: --config.check exits 0 on a good file and 1, naming the
// line, on a bad one, as blackbox_exporter's does.
func checkConfig(t *testing.T, exporter string) {
	out, err := exec.Command(exporter, "--config.check", "--config.file=../../config.example.yml").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "config.example.yml: ok") {
		t.Fatalf("good file: %v\n%s", err, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.yml")
	if err := os.WriteFile(bad, []byte("interval: 30s\ndestinatons:\n  - name: a\n    lid: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(exporter, "--config.check", "--config.file="+bad).CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), bad+":2: unknown key `destinatons` (did you mean `destinations`?)") {
		t.Fatalf("bad file: %v\n%s", err, out)
	}
}

// checkBuildInfo: the exporter, run on the built-in sim, exports
// ibtracer_build_info with the stamped version, revision and branch.
func checkBuildInfo(t *testing.T, exporter string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := filepath.Join(t.TempDir(), "ibtracer.yml")
	if err := os.WriteFile(cfg, []byte("interval: 1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exporter, "--ib.transport=sim", "--config.file="+cfg, "--web.listen-address="+addr)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	want := fmt.Sprintf(`branch="%s",`, branch)
	deadline := time.Now().Add(90 * time.Second)
	var body string
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond): // polling for the listener, bounded by deadline
		}
	}
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "ibtracer_build_info{") && strings.Contains(line, want) &&
			strings.Contains(line, fmt.Sprintf(`revision="%s"`, revision)) && strings.Contains(line, fmt.Sprintf(`version="%s"`, version)) &&
			strings.HasSuffix(line, " 1") {
			return
		}
	}
	t.Fatalf("no ibtracer_build_info with version %s revision %s branch %s in /metrics:\n%.3000s\nlogs:\n%s", version, revision, branch, body, logs.String())
}
