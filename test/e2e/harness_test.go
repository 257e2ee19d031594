// Package e2e holds the end-to-end tests: the shipped binaries against
// the real peers (ibsim, OpenSM, Prometheus, Alertmanager, systemd's
// verifier). One harness, this file, builds the binaries, starts the
// peers and the exporter, scrapes /metrics and waits for conditions with
// a deadline. `go test -short` skips every test here.
package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/collector/pages"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
)

// root is the repository root, seen from this package's directory.
const root = "../.."

var topoDir = filepath.Join(root, "testdata", "topologies")

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// skipShort skips an end-to-end test under `go test -short` (make
// test-short).
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
}

// binaries builds the exporter and ibtracer once, without cgo, as shipped.
func binaries(t *testing.T) (exporter, ibtracer string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "ibtracer-e2e-")
		if buildErr != nil {
			return
		}
		for _, b := range [][2]string{{"ibtracer_exporter", "."}, {"ibtracer", "./cmd/ibtracer"}} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, b[0]), b[1])
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", b[1], err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "ibtracer_exporter"), filepath.Join(binDir, "ibtracer")
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// poll calls cond every interval until it holds or d has passed, and
// says whether it held.
func poll(d, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
}

// stopProcess interrupts cmd, waits up to 5 s for it to exit, then kills it.
func stopProcess(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// startDaemon runs a program for the rest of the test, in its own dir.
func startDaemon(t *testing.T, dir, bin string, args ...string) {
	t.Helper()
	startDaemonFor(t, 3*time.Minute, dir, bin, args...)
}

// startDaemonFor is startDaemon with a lifetime of its own.
func startDaemonFor(t *testing.T, lifetime time.Duration, dir, bin string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), lifetime)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	out, _ := os.Create(filepath.Join(dir, filepath.Base(bin)+".log"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopProcess(cmd)
		cancel()
		out.Close()
		if t.Failed() {
			b, _ := os.ReadFile(out.Name())
			if len(b) > 3000 {
				b = b[len(b)-3000:]
			}
			t.Logf("%s log:\n%s", bin, b)
		}
	})
}

// exporterProc is a running exporter binary.
type exporterProc struct {
	t      *testing.T
	addr   string
	cfg    string
	cmd    *exec.Cmd
	mu     sync.Mutex
	logs   strings.Builder
	client *http.Client
	scheme string
	user   string
	pass   string
}

func startExporter(t *testing.T, env []string, configYAML string, args ...string) *exporterProc {
	t.Helper()
	return startExporterUnder(t, nil, env, configYAML, args...)
}

// startExporterUnder runs the exporter under a wrapper command (such as
// prlimit): wrap, then the exporter's path and arguments.
func startExporterUnder(t *testing.T, wrap, env []string, configYAML string, args ...string) *exporterProc {
	t.Helper()
	return startExporterFor(t, 3*time.Minute, wrap, env, configYAML, args...)
}

// startExporterFor is startExporterUnder with a lifetime of its own.
func startExporterFor(t *testing.T, lifetime time.Duration, wrap, env []string, configYAML string, args ...string) *exporterProc {
	t.Helper()
	bin, _ := binaries(t)
	dir := t.TempDir()
	p := &exporterProc{t: t, addr: freePort(t), cfg: filepath.Join(dir, "ibtracer.yml"), client: &http.Client{Timeout: 10 * time.Second}, scheme: "http"}
	if err := os.WriteFile(p.cfg, []byte(configYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), lifetime)
	argv := append(append(append([]string(nil), wrap...), bin, "--config.file="+p.cfg, "--web.listen-address="+p.addr,
		"--log.level=debug", "--device.retry-interval=1s"), args...)
	p.cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
	p.cmd.Dir = dir
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	stderr, _ := p.cmd.StderrPipe()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.logs.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		stopProcess(p.cmd)
		cancel()
		if t.Failed() {
			t.Logf("exporter log:\n%s", p.Logs())
		}
	})
	return p
}

// startIbsimExporter runs the exporter attached to fab at node.
func startIbsimExporter(t *testing.T, fab *ibsimtest.Fabric, node, configYAML string, args ...string) *exporterProc {
	t.Helper()
	return startExporter(t, []string{"IBSIM_SOCKNAME=" + fab.SockName}, configYAML,
		append([]string{"--ib.transport=ibsim", "--ibsim.node=" + node}, args...)...)
}

func (p *exporterProc) Logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

// writeConfig replaces the exporter's configuration file.
func (p *exporterProc) writeConfig(configYAML string) {
	p.t.Helper()
	if err := os.WriteFile(p.cfg, []byte(configYAML), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// sighup asks the exporter to reload its configuration.
func (p *exporterProc) sighup() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		p.t.Fatal(err)
	}
}

func (p *exporterProc) do(method, path string) (int, string) {
	p.t.Helper()
	req, _ := http.NewRequest(method, p.scheme+"://"+p.addr+path, nil)
	if p.user != "" {
		req.SetBasicAuth(p.user, p.pass)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (p *exporterProc) get(path string) (int, string)  { return p.do(http.MethodGet, path) }
func (p *exporterProc) post(path string) (int, string) { return p.do(http.MethodPost, path) }

// waitFor polls /metrics until cond holds, for up to d; the test fails if
// it does not.
func (p *exporterProc) waitFor(d time.Duration, what string, cond func(metrics string) bool) string {
	p.t.Helper()
	body, _, ok := p.await(d, cond)
	if !ok {
		p.t.Fatalf("waited %v for %s; last /metrics:\n%s", d, what, grepMetrics(body, "ibtracer_"))
	}
	return body
}

// await polls /metrics until cond holds, for up to d, and returns the last
// body, how long it waited and whether cond held; it leaves failing to the
// caller (a subtest, or a check that must not stop the rest).
func (p *exporterProc) await(d time.Duration, cond func(metrics string) bool) (string, time.Duration, bool) {
	start := time.Now()
	var body string
	ok := poll(d, 100*time.Millisecond, func() bool {
		var code int
		code, body = p.get("/metrics")
		return code == 200 && cond(body)
	})
	return body, time.Since(start), ok
}

// traces returns /traces.
func (p *exporterProc) traces() []pages.TraceView {
	p.t.Helper()
	_, body := p.get("/traces")
	var views []pages.TraceView
	if err := json.Unmarshal([]byte(body), &views); err != nil {
		p.t.Fatalf("/traces: %v", err)
	}
	return views
}

// outPort returns the port the last trace to dest leaves node by, from
// /traces (0 if node is not on the path).
func (p *exporterProc) outPort(dest, node string) uint8 {
	p.t.Helper()
	for _, v := range p.traces() {
		if v.Name == dest && v.Last != nil {
			for _, h := range v.Last.Hops {
				if h.NodeDesc == node {
					return h.OutPort
				}
			}
		}
	}
	return 0
}

func grepMetrics(body, prefix string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) && !strings.Contains(l, "_bucket") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// value returns the sample of series name{labels...} in a /metrics body.
func value(body, series string) (float64, bool) {
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, series+" ") {
			v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(l, series)), 64)
			return v, err == nil
		}
	}
	return 0, false
}

func allTraced(names ...string) func(string) bool {
	return func(body string) bool {
		for _, n := range names {
			if v, ok := value(body, fmt.Sprintf(`ibtracer_last_trace_timestamp_seconds{dest=%q}`, n)); !ok || v == 0 {
				return false
			}
		}
		return true
	}
}

// startAgent runs our vendor agent (with the ibping responder) at node
// until the test ends, and returns its engine.
func startAgent(t *testing.T, fab *ibsimtest.Fabric, node string, cfg agent.Config) *ibmad.Engine {
	t.Helper()
	e := ibmad.NewEngine(fab.Dial(node, true), ibmad.Options{})
	if _, err := agent.New(e, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func startAgents(t *testing.T, fab *ibsimtest.Fabric, nodes ...string) {
	t.Helper()
	for _, n := range nodes {
		startAgent(t, fab, n, agent.Config{Ping: true})
	}
}

// lidsOf maps node names to base LIDs with a directed-route walk from
// node from (no SA).
func lidsOf(t *testing.T, fab *ibsimtest.Fabric, from string) map[string]uint16 {
	t.Helper()
	e := ibmad.NewEngine(fab.Dial(from, false), ibmad.Options{Timeout: 2 * time.Second})
	defer e.Close()
	lids, err := discoverWalk(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	return lids
}

// discoverWalk returns every node's description and base LID (a CA's first port).
func discoverWalk(ctx context.Context, e *ibmad.Engine) (map[string]uint16, error) {
	ports, err := madtest.WalkPortLIDs(ctx, e)
	if err != nil {
		return nil, err
	}
	out := map[string]uint16{}
	for _, p := range ports {
		if _, seen := out[p.Node.Desc]; !seen { // a CA's first port
			out[p.Node.Desc] = p.LID
		}
	}
	return out, nil
}

// startTwoSwitch starts two-switch.net on ibsim with OpenSM kept running on
// a host of its own (off every traced path) and sweeping every second, and
// returns the fabric and the hosts' LIDs.
func startTwoSwitch(t *testing.T) (*ibsimtest.Fabric, map[string]uint16) {
	t.Helper()
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "two-switch.net"), ibsimtest.Options{KeepSM: true, SMHost: true, SweepSeconds: 1})
	return fab, lidsOf(t, fab, "host1")
}
