package ibsimtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim"
	"github.com/ibtracer/ibtracer_exporter/internal/syncbuf"
)

// Packages the harness needs, by the file each provides.
var requirements = []struct{ file, pkg string }{
	{"ibsim", "ibsim-utils"},
	{"opensm", "opensm"},
	{"smpquery", "infiniband-diags"},
	{"ibroute", "infiniband-diags"},
	{"saquery", "infiniband-diags"},
	{"ibtracert", "infiniband-diags"},
	{"ibping", "infiniband-diags"},
}

// Umad2sim returns the path of libumad2sim.so, or "".
func Umad2sim() string {
	for _, pat := range []string{"/usr/lib/*/umad2sim/libumad2sim.so", "/usr/lib/umad2sim/libumad2sim.so",
		"/usr/local/lib/umad2sim/libumad2sim.so", "/usr/lib64/umad2sim/libumad2sim.so"} {
		if m, _ := filepath.Glob(pat); len(m) > 0 {
			return m[0]
		}
	}
	return ""
}

// Require skips (or, under CI=true, fails) t unless every peer is installed.
// Under -short it always skips: go test -short starts no external peer.
func Require(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("real-peer test (ibsim, OpenSM, infiniband-diags): skipped under -short")
	}
	var missing []string
	for _, r := range requirements {
		if _, err := exec.LookPath(r.file); err != nil {
			if _, err := os.Stat("/usr/sbin/" + r.file); err != nil {
				missing = append(missing, fmt.Sprintf("%s (Debian %s)", r.file, r.pkg))
			}
		}
	}
	if Umad2sim() == "" {
		missing = append(missing, "libumad2sim.so (Debian libumad2sim0)")
	}
	if len(missing) == 0 {
		return
	}
	msg := "real-peer test needs " + strings.Join(missing, ", ") +
		"; install: apt-get install ibsim-utils libumad2sim0 opensm infiniband-diags"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func lookPath(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return "/usr/sbin/" + name
}

// Options configure Start.
type Options struct {
	// KeepSM keeps OpenSM running (for SA queries and re-sweeps); without
	// it OpenSM sweeps once (-o) and exits, the LIDs and tables staying in
	// ibsim.
	KeepSM bool
	// SMNode is where OpenSM attaches; default ibsim's default node.
	SMNode string
	// SMHost cables a dedicated host, SMHostName, to the first switch (on
	// one extra port) and runs OpenSM there. ibsim hands every
	// unsolicited QP1 request arriving at a node to that node's "issm"
	// client, and OpenSM under libumad2sim exits on a vendor-class MAD it
	// has no agent for (a real kernel answers such a MAD itself), so tests
	// that keep OpenSM running while tracing keep it off every traced path.
	SMHost bool
	// SweepSeconds is OpenSM's sweep interval when kept running (0: its
	// default of 10 s).
	SweepSeconds int
	// Lifetime bounds every process; default 5 minutes.
	Lifetime time.Duration
	// SMArgs are extra OpenSM arguments (for example "-l", "2" for LMC 2).
	SMArgs []string
}

// Fabric is a running ibsim with OpenSM's configuration applied.
type Fabric struct {
	t        testing.TB
	Dir      string
	SockName string
	Topology string
	lib      string
	ctx      context.Context
	cancel   context.CancelFunc
	ibsim    *exec.Cmd
	console  io.WriteCloser
	ibsimOut *syncbuf.Buffer
	sm       *exec.Cmd
	opts     Options
}

var seq atomic.Int32

// Start runs ibsim on topology (a file path) and OpenSM on it.
func Start(t testing.TB, topology string, o Options) *Fabric {
	t.Helper()
	Require(t)
	if o.Lifetime <= 0 {
		o.Lifetime = 5 * time.Minute
	}
	abs, err := filepath.Abs(topology)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if o.SMHost {
		var err error
		if abs, err = withSMHost(abs, dir); err != nil {
			t.Fatal(err)
		}
		o.SMNode = SMHostName
	}
	f := &Fabric{t: t, Dir: dir, Topology: abs, lib: Umad2sim(), opts: o,
		SockName: fmt.Sprintf("ibt%d_%d", os.Getpid(), seq.Add(1))}
	f.ctx, f.cancel = context.WithTimeout(context.Background(), o.Lifetime)
	t.Cleanup(f.stop)
	f.startIbsim()
	f.startSM()
	return f
}

// Restart kills ibsim (SIGKILL, as a crash would) and OpenSM, starts a new
// ibsim on the same topology under the same IBSIM_SOCKNAME, and applies
// OpenSM's configuration again. Clients of the old ibsim are not known to
// the new one: they must attach again.
func (f *Fabric) Restart() {
	f.t.Helper()
	f.Kill()
	f.Resume()
}

// Resume starts ibsim again after Kill, on the same topology under the
// same IBSIM_SOCKNAME, and applies OpenSM's configuration again (OpenSM's
// cache in Dir gives every port the LID it had).
func (f *Fabric) Resume() {
	f.t.Helper()
	f.startIbsim()
	f.startSM()
}

// Kill kills ibsim (SIGKILL) and OpenSM and waits for them to exit; the
// socket name stays reserved for Restart.
func (f *Fabric) Kill() {
	f.t.Helper()
	if f.sm != nil && f.sm.Process != nil {
		_ = f.sm.Process.Kill()
		_ = f.sm.Wait()
		f.sm = nil
	}
	if f.ibsim != nil && f.ibsim.Process != nil {
		_ = f.ibsim.Process.Kill()
		_ = f.ibsim.Wait()
		f.ibsim = nil
	}
	f.waitSocketGone()
}

func (f *Fabric) startIbsim() {
	f.t.Helper()
	f.ibsim = exec.CommandContext(f.ctx, lookPath("ibsim"), "-s", f.Topology)
	f.ibsim.Dir = f.Dir
	f.ibsim.Env = append(os.Environ(), "IBSIM_SOCKNAME="+f.SockName)
	f.ibsimOut = &syncbuf.Buffer{}
	f.ibsim.Stdout, f.ibsim.Stderr = f.ibsimOut, f.ibsimOut
	var err error
	if f.console, err = f.ibsim.StdinPipe(); err != nil {
		f.t.Fatal(err)
	}
	if err := f.ibsim.Start(); err != nil {
		f.t.Fatalf("start ibsim: %v", err)
	}
	f.waitSocket()
}

func (f *Fabric) startSM() {
	f.t.Helper()
	o := f.opts
	args := append([]string{"-f", filepath.Join(f.Dir, "opensm.log")}, o.SMArgs...)
	smCtx := f.ctx
	if o.KeepSM && o.SweepSeconds > 0 {
		args = append(args, "-s", strconv.Itoa(o.SweepSeconds))
	}
	if !o.KeepSM {
		args = append(args, "-o") // one sweep, then exit
		var cancel context.CancelFunc
		smCtx, cancel = context.WithTimeout(f.ctx, 60*time.Second)
		defer cancel()
	}
	sm := exec.CommandContext(smCtx, lookPath("opensm"), args...)
	sm.Dir = f.Dir
	sm.Env = append(f.env(o.SMNode, true), "OSM_CACHE_DIR="+f.Dir, "OSM_TMP_DIR="+f.Dir)
	smOut := &syncbuf.Buffer{}
	sm.Stdout, sm.Stderr = smOut, smOut
	if !o.KeepSM {
		if err := sm.Run(); err != nil {
			f.t.Fatalf("opensm -o: %v\n%s\n%s", err, smOut.String(), f.tail("opensm.log"))
		}
		return
	}
	_ = os.Remove(filepath.Join(f.Dir, "opensm-subnet.lst"))
	if err := sm.Start(); err != nil {
		f.t.Fatalf("start opensm: %v", err)
	}
	f.sm = sm
	f.waitFile("opensm-subnet.lst", 60*time.Second)
}

// SMHostName is the host Options.SMHost adds.
const SMHostName = "ibt-sm"

// withSMHost writes a copy of the topology with SMHostName cabled to one
// extra port of its first switch.
func withSMHost(topology, dir string) (string, error) {
	b, err := os.ReadFile(topology)
	if err != nil {
		return "", err
	}
	lines := strings.Split(string(b), "\n")
	hdr := regexp.MustCompile(`^Switch\s+(\d+)\s+"([^"]+)"(.*)$`)
	for i, l := range lines {
		m := hdr.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		port := n + 1
		lines[i] = fmt.Sprintf("Switch\t%d \"%s\"%s\n[%d]\t\"%s\"[1]", port, m[2], m[3], port, SMHostName)
		lines = append(lines, "", fmt.Sprintf("Hca\t1\t\"%s\"", SMHostName), fmt.Sprintf("[1]\t\"%s\"[%d]", m[2], port), "")
		out := filepath.Join(dir, "topology-with-sm.net")
		return out, os.WriteFile(out, []byte(strings.Join(lines, "\n")), 0o644)
	}
	return "", fmt.Errorf("%s: no switch to cable the SM host to", topology)
}

func (f *Fabric) tail(name string) string {
	b, _ := os.ReadFile(filepath.Join(f.Dir, name))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// waitSocket waits for ibsim's control socket to appear.
func (f *Fabric) waitSocket() {
	want := ctlSocketLine(f.SockName)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile("/proc/net/unix")
		if bytes.Contains(b, want) {
			return
		}
		if f.ibsim.ProcessState != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.t.Fatalf("ibsim did not open @%s:ctl within 20s; its output:\n%s", f.SockName, f.ibsimOut.String())
}

// ctlSocketLine is how /proc/net/unix shows ibsim's control socket: the
// NUL that ends the abstract name shows as '@' (our clients' sockets are
// @NAME:ctlID@).
func ctlSocketLine(sock string) []byte { return []byte(" @" + sock + ":ctl@\n") }

// waitSocketGone waits until no process holds ibsim's control socket.
func (f *Fabric) waitSocketGone() {
	want := ctlSocketLine(f.SockName)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile("/proc/net/unix")
		if !bytes.Contains(b, want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.t.Fatalf("ibsim's socket @%s:ctl is still open 20s after a kill", f.SockName)
}

func (f *Fabric) waitFile(name string, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(f.Dir, name)); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	f.t.Fatalf("OpenSM did not write %s within %v; opensm.log:\n%s", name, d, f.tail("opensm.log"))
}

// env is the environment for a process attached at node; preload adds
// libumad2sim for C programs.
func (f *Fabric) env(node string, preload bool) []string {
	env := []string{"IBSIM_SOCKNAME=" + f.SockName, "PATH=" + os.Getenv("PATH"), "HOME=" + f.Dir}
	if node != "" {
		env = append(env, "SIM_HOST="+node)
	}
	if preload {
		env = append(env, "LD_PRELOAD="+f.lib)
	}
	return env
}

// Env is the environment a stock tool needs to run at node.
func (f *Fabric) Env(node string) []string { return f.env(node, true) }

// Tool runs a stock infiniband-diags program attached at node, bounded to
// 30 seconds, and returns its standard output.
func (f *Fabric) Tool(node, name string, args ...string) (string, error) {
	return f.ToolEnv(node, nil, name, args...)
}

// ToolEnv is Tool with extra environment variables.
func (f *Fabric) ToolEnv(node string, extra []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(f.ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, lookPath(name), args...)
	cmd.Dir = f.Dir
	cmd.Env = append(f.Env(node), extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%s %s at %s: %v: %s", name, strings.Join(args, " "), node, err, errb.String())
	}
	return out.String(), nil
}

// StartTool starts a long-running stock tool (for example ibping -S) at
// node; it is stopped with the fabric.
func (f *Fabric) StartTool(node string, extra []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(f.ctx, lookPath(name), args...)
	cmd.Dir = f.Dir
	cmd.Env = append(f.Env(node), extra...)
	if err := cmd.Start(); err != nil {
		f.t.Fatalf("start %s: %v", name, err)
	}
	f.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// Console sends one command to ibsim's console (for example
// `Unlink "sw1"[3]`).
func (f *Fabric) Console(cmd string) error {
	_, err := io.WriteString(f.console, cmd+"\n")
	return err
}

// Options returns ibsim transport options for a client at node.
func (f *Fabric) Options(node string, acceptRequests bool) ibsim.Options {
	return ibsim.Options{SockName: f.SockName, Node: node, AcceptRequests: acceptRequests}
}

// Dial attaches our ibsim transport at node; it is closed with the test.
func (f *Fabric) Dial(node string, acceptRequests bool) *ibsim.Transport {
	f.t.Helper()
	tr, err := ibsim.Dial(f.Options(node, acceptRequests))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { tr.Close() })
	return tr
}

// Output returns what ibsim printed so far.
func (f *Fabric) Output() string { return f.ibsimOut.String() }

func (f *Fabric) stop() {
	if f.sm != nil && f.sm.Process != nil {
		_ = f.sm.Process.Kill()
		_ = f.sm.Wait()
	}
	if f.ibsim != nil && f.ibsim.Process != nil && f.ibsim.ProcessState == nil {
		_, _ = io.WriteString(f.console, "Quit\n")
		done := make(chan struct{})
		go func() { _ = f.ibsim.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = f.ibsim.Process.Kill()
			<-done
		}
	}
	f.cancel()
}
