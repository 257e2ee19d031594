// Package kernel runs the real-kernel test: test/kernel/run.sh boots two
// QEMU guests on Debian's kernel with Soft-RoCE and ib_umad, and this
// test reads the verdicts their consoles print (docs/protocol.md, "Tested
// against the real kernel"). A third guest runs Debian's systemd with the
// packaged unit, which starts before ib_umad is loaded (bootorder.sh;
// docs/packaging.md, "Boot order").
package kernel

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The checks each guest must report as passed.
var (
	checksA = []string{"rxe_device", "agent_registration", "agent_conflict"}
	checksB = []string{"rxe_device", "roce_message", "roce_exporter", "permission_message", "classportinfo",
		"sourceroute_right_port", "sourceroute_wrong_port", "ibping", "timeout", "refused_then_good", "no_qp0", "ibping_server",
		"device_removal"}
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// verdicts reads a guest's console: check -> "PASS detail" / "FAIL detail".
func verdicts(t *testing.T, path string) (map[string]string, []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]string{}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		i := strings.Index(line, "KT ")
		if i < 0 {
			continue
		}
		line = line[i:]
		lines = append(lines, line)
		f := strings.SplitN(line, " ", 4)
		if len(f) >= 3 && (f[1] == "PASS" || f[1] == "FAIL") {
			detail := ""
			if len(f) == 4 {
				detail = f[3]
			}
			if prev, ok := got[f[2]]; !ok || strings.HasPrefix(prev, "PASS") {
				got[f[2]] = f[1] + " " + detail // a FAIL is kept
			}
		}
	}
	return got, lines
}

// TestRealKernel boots the guests and asserts every check. It takes about
// a minute on two cores once the kernel is cached (the first run fetches
// it with apt); it is skipped under -short, and only where QEMU cannot run
// at all, saying so loudly.
func TestRealKernel(t *testing.T) {
	work := runGuests(t)
	assertChecks(t, work, "a", checksA)
	assertChecks(t, work, "b", checksB)
}

// checksC: the boot-order guest (bootorder-guest.sh). The packaged unit
// starts before ib_umad is loaded; once it is, the service may open the
// umad device and does, without a restart.
var checksC = []string{"bootorder_late", "bootorder_udev", "bootorder_cgroup", "bootorder_exporter"}

// TestUnitBootOrder boots Debian's systemd in a guest with the packaged
// unit enabled, loads ib_umad after the service started and asserts that
// the service reaches the device (docs/packaging.md, "Boot order"). About
// 30 s once the kernel and the Debian root are cached; the first run
// bootstraps the root (30 to 45 s more). Needs root; skipped under -short.
func TestUnitBootOrder(t *testing.T) {
	work := runGuests(t, "bootorder")
	assertChecks(t, work, "c", checksC)
}

// runGuests runs run.sh with args after its work directory and returns
// that directory; it skips loudly when run.sh says the guests cannot run.
func runGuests(t *testing.T, args ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("boots QEMU guests: not under -short")
	}
	work := t.TempDir()
	cmd := exec.Command("bash", append([]string{"run.sh", work}, args...)...)
	cmd.Env = append(os.Environ(), "KT_PORT="+strconv.Itoa(freePort(t)), "KT_TIMEOUT=300")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "KT TIME ") {
			t.Log(l)
		}
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 77 {
		t.Logf("\n%s\n!!! REAL-KERNEL TEST SKIPPED: the guests cannot run on this machine: %s\n%s",
			strings.Repeat("!", 72), strings.TrimSpace(string(out)), strings.Repeat("!", 72))
		t.Skip("the guests cannot run here; see the log above")
	}
	if err != nil {
		for _, g := range []string{"a", "b", "c"} {
			if b, rerr := os.ReadFile(filepath.Join(work, g+".log")); rerr == nil {
				t.Logf("guest %s console:\n%s", g, b)
			}
		}
		t.Fatalf("run.sh: %v\n%s", err, out)
	}
	t.Logf("run.sh took %v", took.Round(100*time.Millisecond))
	return work
}

// assertChecks reads guest's console in work and asserts that it passed
// every one of checks, and failed none.
func assertChecks(t *testing.T, work, guest string, checks []string) {
	t.Helper()
	got, lines := verdicts(t, filepath.Join(work, guest+".log"))
	for _, l := range lines {
		if strings.HasPrefix(l, "KT BOOTED") || strings.HasPrefix(l, "KT DONE") || strings.HasPrefix(l, "KT INFO") || strings.HasPrefix(l, "KT LOG") {
			t.Logf("guest %s: %s", guest, l)
		}
	}
	for _, c := range checks {
		t.Run(guest+"/"+c, func(t *testing.T) {
			v, ok := got[c]
			switch {
			case !ok:
				t.Fatalf("guest %s did not report %s; its verdicts:\n%s", guest, c, strings.Join(lines, "\n"))
			case !strings.HasPrefix(v, "PASS"):
				t.Fatalf("%s", v)
			}
			t.Log(v)
		})
	}
	for c, v := range got {
		if strings.HasPrefix(v, "FAIL") {
			t.Errorf("guest %s: %s %s", guest, c, v)
		}
	}
}
