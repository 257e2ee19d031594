package e2e

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/collector"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// root is the repository root, seen from this package's directory.
const root = "../.."

var topoDir = filepath.Join(root, "testdata", "topologies")

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

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

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
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
	bin, _ := binaries(t)
	dir := t.TempDir()
	p := &exporterProc{t: t, addr: freePort(t), cfg: filepath.Join(dir, "ibtracer.yml"), client: &http.Client{Timeout: 10 * time.Second}, scheme: "http"}
	if err := os.WriteFile(p.cfg, []byte(configYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	p.cmd = exec.CommandContext(ctx, bin, append([]string{"--config.file=" + p.cfg, "--web.listen-address=" + p.addr,
		"--log.level=debug", "--device.retry-interval=1s"}, args...)...)
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
		_ = p.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			<-done
		}
		cancel()
		if t.Failed() {
			t.Logf("exporter log:\n%s", p.Logs())
		}
	})
	return p
}

func (p *exporterProc) Logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

func (p *exporterProc) get(path string) (int, string) {
	p.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.scheme+"://"+p.addr+path, nil)
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

func (p *exporterProc) post(path string) (int, string) {
	p.t.Helper()
	resp, err := p.client.Post(p.scheme+"://"+p.addr+path, "text/plain", nil)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitFor polls /metrics until cond holds, for up to d.
func (p *exporterProc) waitFor(d time.Duration, what string, cond func(metrics string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(d)
	var body string
	for time.Now().Before(deadline) {
		var code int
		code, body = p.get("/metrics")
		if code == 200 && cond(body) {
			return body
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.t.Fatalf("waited %v for %s; last /metrics:\n%s", d, what, grepMetrics(body, "ibtracer_"))
	return ""
}

// outPort returns the port the last trace to dest leaves node by, from
// /traces (0 if node is not on the path).
func (p *exporterProc) outPort(dest, node string) uint8 {
	p.t.Helper()
	_, body := p.get("/traces")
	var views []collector.TraceView
	if err := json.Unmarshal([]byte(body), &views); err != nil {
		p.t.Fatalf("/traces: %v", err)
	}
	for _, v := range views {
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
			if v, ok := value(body, fmt.Sprintf(`ibtracer_last_trace_timestamp_seconds{destination=%q}`, n)); !ok || v == 0 {
				return false
			}
		}
		return true
	}
}

func startAgents(t *testing.T, fab *ibsimtest.Fabric, nodes ...string) {
	t.Helper()
	for _, n := range nodes {
		tr := fab.Dial(n, true)
		e := ibmad.NewEngine(tr, ibmad.Options{})
		if _, err := agent.New(e, agent.Config{Ping: true}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
	}
}

// TestExporterOnIbsimMatchesIbtracer: the exporter on ibsim (OpenSM,
// agents on several CAs) reports the hop counts, validated and unsupported
// hops that `ibtracer --format json` reports for the same destinations,
// and promtool finds nothing wrong with /metrics.
func TestExporterOnIbsimMatchesIbtracer(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-128.net"), ibsimtest.Options{})
	startAgents(t, fab, "H1-1", "H4-2", "H9-0", "H15-7")
	dests := map[string]string{"a": "H1-1", "b": "H4-2", "c": "H9-0", "d": "H15-7", "e": "H2-2", "f": "L7"}
	lids := lidsOf(t, fab, "H0-0")
	cfg := "interval: 1s\ntimeout: 300ms\nretries: 1\ndestinations:\n"
	var names []string
	for name, node := range dests {
		cfg += fmt.Sprintf("  - {name: %s, lid: %d}\n", name, lids[node])
		names = append(names, name)
	}
	env := []string{"IBSIM_SOCKNAME=" + fab.SockName}
	p := startExporter(t, env, cfg, "--ib.transport=ibsim", "--ibsim.node=H0-0")
	body := p.waitFor(30*time.Second, "a trace of every destination", allTraced(names...))

	_, ibtracer := binaries(t)
	args := []string{"--ib.transport=ibsim", "--ibsim.node=H0-0", "--format=json", "-t", "300", "-r", "1"}
	for _, name := range names {
		args = append(args, "-l", strconv.Itoa(int(lids[dests[name]])))
	}
	cmd := exec.Command(ibtracer, args...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ibtracer: %v", err)
	}
	var results []trace.JSONResult
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatal(err)
	}
	byLID := map[uint16]trace.JSONResult{}
	for _, r := range results {
		byLID[r.DLID] = r
	}
	for _, name := range names {
		r := byLID[lids[dests[name]]]
		validated, unsupported := 0, 0
		for _, h := range r.Hops[1:] {
			switch h.AgentStatus {
			case "validated":
				validated++
			case "unsupported", "lost":
				unsupported++
			}
		}
		for metric, want := range map[string]int{"path_hops": r.PathHops, "path_validated_hops": validated,
			"path_unsupported_hops": unsupported, "trace_success": 1} {
			got, ok := value(body, fmt.Sprintf(`ibtracer_%s{destination=%q}`, metric, name))
			if !ok || int(got) != want {
				t.Errorf("%s (%s): ibtracer_%s = %v, ibtracer --format json says %d", name, dests[name], metric, got, want)
			}
		}
	}
	if validated, _ := value(body, `ibtracer_path_validated_hops{destination="a"}`); validated != 1 {
		t.Errorf("destination a (agent on H1-1): %v validated hops", validated)
	}
	// promtool's lint of the exposition.
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is missing: apt-get install prometheus")
		}
		t.Skip("promtool is missing (Debian prometheus)")
	}
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(body)
	if o, err := check.CombinedOutput(); err != nil || len(strings.TrimSpace(string(o))) != 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, o)
	}
}

// lidsOf maps node names to base LIDs with a directed-route walk (no SA).
func lidsOf(t *testing.T, fab *ibsimtest.Fabric, from string) map[string]uint16 {
	t.Helper()
	tr := fab.Dial(from, false)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 2 * time.Second})
	defer e.Close()
	out := map[string]uint16{}
	ctx := context.Background()
	sub, err := discoverWalk(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	for name, lid := range sub {
		out[name] = lid
	}
	return out
}

// TestPathChange: Unlink a link on a traced path on ibsim's console;
// OpenSM re-sweeps and ibtracer_path_changes_total of that destination
// rises; restoring the link makes it rise again; the other destination
// does not change.
func TestPathChange(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "two-switch.net"), ibsimtest.Options{KeepSM: true, SMHost: true, SweepSeconds: 1})
	startAgents(t, fab, "host2")
	lids := lidsOf(t, fab, "host1")
	cfg := fmt.Sprintf("interval: 1s\ntimeout: 200ms\nretries: 1\ndestinations:\n  - {name: far, lid: %d}\n  - {name: near, lid: %d}\n",
		lids["host2"], lids["host3"])
	p := startExporter(t, []string{"IBSIM_SOCKNAME=" + fab.SockName}, cfg, "--ib.transport=ibsim", "--ibsim.node=host1")
	p.waitFor(30*time.Second, "first traces", allTraced("far", "near"))
	// Which of the two parallel sw1-sw2 cables does the path to host2 use?
	port := p.outPort("far", "sw1")
	if port != 3 && port != 5 {
		t.Fatalf("path to host2 leaves sw1 by port %d, want 3 or 5", port)
	}
	changes := func(name string) func(string) float64 {
		return func(b string) float64 {
			v, _ := value(b, fmt.Sprintf(`ibtracer_path_changes_total{destination=%q}`, name))
			return v
		}
	}
	if err := fab.Console(fmt.Sprintf(`Unlink "sw1"[%d]`, port)); err != nil {
		t.Fatal(err)
	}
	b := p.waitFor(45*time.Second, "a path change after Unlink", func(b string) bool { return changes("far")(b) >= 1 })
	if n := changes("near")(b); n != 0 {
		t.Fatalf("the other destination changed %v times", n)
	}
	if err := fab.Console(fmt.Sprintf(`Link "sw1"[%d] "sw2"[%d]`, port, port)); err != nil {
		t.Fatal(err)
	}
	b = p.waitFor(45*time.Second, "a second path change after the link returned", func(b string) bool { return changes("far")(b) >= 2 })
	if n := changes("near")(b); n != 0 {
		t.Fatalf("the other destination changed %v times", n)
	}
	if ts, _ := value(b, `ibtracer_path_last_change_timestamp_seconds{destination="far"}`); ts < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Fatalf("last change timestamp %v", ts)
	}
}

// TestReload: a bad file keeps the old configuration, sets the reload
// gauge to 0 and logs file:line; a good one adds and removes destinations.
func TestReload(t *testing.T) {
	p := startExporter(t, nil, "interval: 1s\ndestinations:\n  - {name: one, node: H1-1}\n  - {name: two, lid: 9}\n", "--ib.transport=sim")
	p.waitFor(20*time.Second, "first traces", allTraced("one", "two"))
	if err := os.WriteFile(p.cfg, []byte("interval: 1s\ndestinations:\n  - {name: one, node: H1-1}\n  - {name: three, lid: 50000}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, msg := p.post("/-/reload")
	if code != 500 || !strings.Contains(msg, "ibtracer.yml:4: destinations[1] (three).lid") {
		t.Fatalf("bad reload: %d %s", code, msg)
	}
	b := p.waitFor(5*time.Second, "reload gauge 0", func(b string) bool {
		v, ok := value(b, "ibtracer_config_last_reload_successful")
		return ok && v == 0
	})
	if _, ok := value(b, `ibtracer_trace_success{destination="two"}`); !ok {
		t.Fatal("the old configuration was not kept")
	}
	if !strings.Contains(p.Logs(), "configuration reload failed; keeping the old configuration") ||
		!strings.Contains(p.Logs(), "ibtracer.yml:4: destinations[1] (three).lid") {
		t.Fatalf("log does not name the line:\n%s", p.Logs())
	}
	if code, _ := p.get("/-/reload"); code != http.StatusMethodNotAllowed {
		t.Fatalf("GET /-/reload: %d", code)
	}
	if err := os.WriteFile(p.cfg, []byte("interval: 1s\ndestinations:\n  - {name: one, node: H1-1}\n  - {name: three, lid: 10}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// SIGHUP this time.
	if err := p.cmd.Process.Signal(syscallSIGHUP()); err != nil {
		t.Fatal(err)
	}
	b = p.waitFor(20*time.Second, "the new destination traced and the old one gone", func(b string) bool {
		v, _ := value(b, "ibtracer_config_last_reload_successful")
		_, two := value(b, `ibtracer_trace_success{destination="two"}`)
		return v == 1 && !two && allTraced("three")(b)
	})
}

// TestTLSAndBasicAuth: --web.config.file with a certificate the test makes.
func TestTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	hash, _ := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	webCfg := filepath.Join(dir, "web.yml")
	_ = os.WriteFile(webCfg, []byte(fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  prom: %s\n",
		certFile, keyFile, hash)), 0o600)
	p := startExporter(t, nil, "interval: 1s\n", "--ib.transport=sim", "--web.config.file="+webCfg)
	pool := x509.NewCertPool()
	cert, _ := x509.ParseCertificate(der)
	pool.AddCert(cert)
	p.client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	p.scheme = "https"
	deadline := time.Now().Add(10 * time.Second)
	code, _ := p.get("/metrics")
	for code == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		code, _ = p.get("/metrics")
	}
	if code != http.StatusUnauthorized {
		t.Fatalf("without credentials: %d, want 401", code)
	}
	p.user, p.pass = "prom", "wrong"
	if code, _ = p.get("/metrics"); code != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d", code)
	}
	p.pass = "s3cret"
	code, body := p.get("/metrics")
	if code != 200 || !strings.Contains(body, "ibtracer_device_up 1") {
		t.Fatalf("with credentials over TLS: %d", code)
	}
	plain := &http.Client{Timeout: 2 * time.Second}
	if resp, err := plain.Get("http://" + p.addr + "/metrics"); err == nil && resp.StatusCode == 200 {
		t.Fatal("plain HTTP served metrics")
	}
}

// TestErrorsKeepServing: an unreachable LID, an unknown GID (an SA error)
// and a missing device each give a clear error while the exporter serves.
func TestErrorsKeepServing(t *testing.T) {
	p := startExporter(t, nil, "interval: 1s\ntimeout: 100ms\nretries: 1\ndestinations:\n"+
		"  - {name: nowhere, lid: 4000}\n  - {name: ghost, gid: \"fe80::dead:beef\"}\n  - {name: fine, node: H2-2}\n", "--ib.transport=sim")
	b := p.waitFor(20*time.Second, "failures counted", func(b string) bool {
		nr, _ := value(b, `ibtracer_trace_failures_total{destination="nowhere",reason="no_route"}`)
		sa, _ := value(b, `ibtracer_trace_failures_total{destination="ghost",reason="sa_error"}`)
		return nr >= 1 && sa >= 1 && allTraced("fine")(b)
	})
	if v, _ := value(b, `ibtracer_trace_success{destination="fine"}`); v != 1 {
		t.Fatal("a healthy destination suffered")
	}
	logs := p.Logs()
	for _, want := range []string{"no route to LID 4000", "resolving gid fe80:0000:0000:0000:0000:0000:dead:beef: the SA knows no such port"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	// No InfiniBand hardware here: the umad transport finds no device.
	q := startExporter(t, nil, "interval: 1s\ndestinations:\n  - {name: x, lid: 3}\n", "--ib.transport=umad")
	b = q.waitFor(20*time.Second, "device_up 0 and a device_error trace", func(b string) bool {
		up, ok := value(b, "ibtracer_device_up")
		dev, _ := value(b, `ibtracer_traces_total{destination="x",result="device_error"}`)
		return ok && up == 0 && dev >= 1
	})
	if code, _ := q.get("/-/healthy"); code != 200 {
		t.Fatal("not serving")
	}
	if !strings.Contains(q.Logs(), "cannot open the InfiniBand device; the exporter keeps serving and retries") ||
		!strings.Contains(q.Logs(), "modprobe") {
		t.Fatalf("log:\n%s", q.Logs())
	}
}
