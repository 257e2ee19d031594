package packages

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
)

// The Debian root the .deb is installed in: debootstrap's minbase with
// what the maintainer scripts and the checks use (systemd for
// systemd-sysusers, systemctl and systemd-analyze; udev; procps for the
// unit's /bin/kill; rdma-core for the module loader the unit starts
// after, unit_test.go). Built once from the machine's own Debian mirror
// and suite and cached as a tarball (docs/packaging.md, "The install test").
var rootPackages = []string{"systemd", "udev", "procps", "rdma-core"}

// debianRoot returns a fresh Debian root in a temp dir, from the cache.
func debianRoot(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("installs into a chroot: needs root")
	}
	promtest.RequireTool(t, "debootstrap", "debootstrap")
	promtest.RequireTool(t, "unshare", "util-linux")
	suite, mirror, err := aptSource()
	if err != nil {
		t.Skipf("no Debian suite to bootstrap: %v", err)
	}
	arch := strings.TrimSpace(run(t, "dpkg", "--print-architecture"))
	cacheDir := os.Getenv("IBTRACER_DEBROOT_CACHE")
	if cacheDir == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		cacheDir = filepath.Join(c, "ibtracer_exporter")
	}
	key := sha256.Sum256([]byte(suite + " " + mirror + " " + arch + " " + strings.Join(rootPackages, ",")))
	tarball := filepath.Join(cacheDir, fmt.Sprintf("debroot-%s-%s-%x.tar", suite, arch, key[:4]))
	if _, err := os.Stat(tarball); err != nil {
		bootstrap(t, suite, mirror, tarball)
	}
	root := t.TempDir()
	runFor(t, 2*time.Minute, "tar", "-xf", tarball, "-C", root)
	return root
}

// bootstrap makes the root with debootstrap and caches it as tarball.
func bootstrap(t *testing.T, suite, mirror, tarball string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(tarball), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	start := time.Now()
	runFor(t, 20*time.Minute, "debootstrap", "--variant=minbase", "--include="+strings.Join(rootPackages, ","),
		suite, dir, mirror)
	tmp := tarball + ".tmp"
	runFor(t, 5*time.Minute, "tar", "-cf", tmp, "-C", dir, ".")
	if err := os.Rename(tmp, tarball); err != nil {
		t.Fatal(err)
	}
	t.Logf("debootstrap %s from %s: %v, cached in %s", suite, mirror, time.Since(start).Round(time.Second), tarball)
}

// aptSource is the machine's Debian suite (/etc/os-release) and the
// mirror its APT sources use for it.
func aptSource() (suite, mirror string, err error) {
	osr, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return "", "", err
	}
	m := regexp.MustCompile(`(?m)^VERSION_CODENAME=(\S+)$`).FindSubmatch(osr)
	if m == nil || !regexp.MustCompile(`(?m)^ID=debian$`).Match(osr) {
		return "", "", errors.New("/etc/os-release names no Debian release")
	}
	suite = string(m[1])
	// deb822 .sources (URIs:, Suites:) and one-line .list entries.
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*.sources")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, stanza := range strings.Split(string(b), "\n\n") {
			uris := regexp.MustCompile(`(?m)^URIs:\s*(\S+)`).FindStringSubmatch(stanza)
			suites := regexp.MustCompile(`(?m)^Suites:(.*)$`).FindStringSubmatch(stanza)
			if uris != nil && suites != nil && regexp.MustCompile(`(?m)^Types:.*\bdeb\b`).MatchString(stanza) &&
				strings.Contains(" "+suites[1]+" ", " "+suite+" ") {
				return suite, uris[1], nil
			}
		}
	}
	lists, _ := filepath.Glob("/etc/apt/sources.list.d/*.list")
	for _, f := range append([]string{"/etc/apt/sources.list"}, lists...) {
		b, _ := os.ReadFile(f)
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(regexp.MustCompile(`\[[^]]*\]`).ReplaceAllString(l, ""))
			if len(f) >= 3 && f[0] == "deb" && f[2] == suite {
				return suite, f[1], nil
			}
		}
	}
	return "", "", fmt.Errorf("no APT source for %s", suite)
}

func runFor(t *testing.T, d time.Duration, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// chroot is a command run in root, in a mount namespace of its own with
// /proc and the machine's /sys (read-only) mounted: the mounts end with
// the command, and the machine's own mounts never change. SYSTEMD_OFFLINE
// tells systemctl it is in a chroot (it cannot always tell by itself: a
// sandbox may hide /proc/1/root): it enables and disables units in the
// root and ignores start, stop, restart and daemon-reload.
func chroot(ctx context.Context, root string, args ...string) *exec.Cmd {
	return mounted(ctx, root, append([]string{"chroot", root}, args...)...)
}

// mounted is a command of this machine's run with root's /proc and /sys
// mounted as chroot mounts them (rpm --root runs its scriptlets in root).
func mounted(ctx context.Context, root string, args ...string) *exec.Cmd {
	script := `set -e; mount -t proc proc "$0/proc"; mount --rbind -o ro /sys "$0/sys"; ` +
		`exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C SYSTEMD_OFFLINE=1 "$@"`
	return exec.CommandContext(ctx, "unshare", append([]string{"--mount", "--propagation", "private", "--fork", "--",
		"sh", "-c", script, root}, args...)...)
}

// inRoot runs args in root and returns its output; it fails the test when
// the command fails.
func inRoot(t *testing.T, root string, args ...string) string {
	t.Helper()
	out, err := runRoot(root, args...)
	if err != nil {
		t.Fatalf("in the root: %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func runRoot(root string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := chroot(ctx, root, args...).CombinedOutput()
	return string(out), err
}

func exists(root, p string) bool { _, err := os.Lstat(filepath.Join(root, p)); return err == nil }

func readRoot(t *testing.T, root, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// nextVersion is v with its patch number one higher: the upgrade's.
func nextVersion(v string) string {
	m := regexp.MustCompile(`^(\d+\.\d+\.)(\d+)`).FindStringSubmatch(v)
	n, _ := strconv.Atoi(m[2])
	return m[1] + strconv.Itoa(n+1)
}

// systemctlLog: a systemctl in place of the root's (moved aside with
// dpkg-divert) that writes down what the maintainer scripts ask of it,
// then runs the real one. /run/systemd/system makes the scripts act as on
// a booted system.
const systemctlLog = "/var/log/systemctl-calls"

func installSystemctlLog(t *testing.T, root string) {
	t.Helper()
	inRoot(t, root, "dpkg-divert", "--quiet", "--rename", "--divert", "/usr/bin/systemctl.real", "/usr/bin/systemctl")
	shim := "#!/bin/sh\necho \"$*\" >> " + systemctlLog + "\nSYSTEMD_OFFLINE=1 exec /usr/bin/systemctl.real \"$@\"\n"
	if err := os.WriteFile(filepath.Join(root, "usr/bin/systemctl"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "run/systemd/system"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// systemctlCalls returns the calls written down since the last call, and
// forgets them.
func systemctlCalls(t *testing.T, root string) []string {
	t.Helper()
	p := filepath.Join(root, systemctlLog)
	b, _ := os.ReadFile(p)
	os.Remove(p)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func hasCall(calls []string, want string) bool {
	for _, c := range calls {
		if c == want {
			return true
		}
	}
	return false
}

var upgrade struct {
	once    sync.Once
	dir     string
	version string
	err     error
	out     []byte
}

// upgradePackages builds, once, the packages of the next patch version
// for arch, and returns their directory and version.
func upgradePackages(t *testing.T, arch string) (string, string) {
	t.Helper()
	upgrade.once.Do(func() {
		upgrade.version = nextVersion(build.version)
		upgrade.dir, upgrade.err = os.MkdirTemp("", "ibtracer-packages-next-")
		if upgrade.err == nil {
			upgrade.out, upgrade.err = makePackage(upgrade.dir, upgrade.version, arch)
		}
	})
	if upgrade.err != nil {
		t.Fatalf("make package VERSION=%s: %v\n%s", upgrade.version, upgrade.err, upgrade.out)
	}
	return upgrade.dir, upgrade.version
}

var passwdRe = regexp.MustCompile(`^ibtracer:x:(\d+):(\d+):ibtracer_exporter:/nonexistent:/usr/sbin/nologin$`)

// TestDebInstallUpgradePurge installs the .deb in a Debian root, checks
// the user, the unit, the udev rule and the configuration there, upgrades
// it to the next version with a changed configuration, removes it and
// purges it.
func TestDebInstallUpgradePurge(t *testing.T) {
	dir := packages(t)
	arch := hostArch(t)
	root := debianRoot(t)
	v1 := build.version
	dir2, v2 := upgradePackages(t, arch)
	for i, deb := range []string{debFile(dir, v1, arch), debFile(dir2, v2, arch)} {
		b, err := os.ReadFile(deb)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(root, "tmp", fmt.Sprintf("v%d.deb", i+1)), b, 0o644)
	}
	installSystemctlLog(t, root)
	const conf = "/etc/ibtracer_exporter/ibtracer.yml"
	const wants = "/etc/systemd/system/multi-user.target.wants/ibtracer_exporter.service"

	// Install.
	t.Logf("dpkg -i %s:\n%s", filepath.Base(debFile(dir, v1, arch)), inRoot(t, root, "dpkg", "-i", "/tmp/v1.deb"))
	pw := strings.TrimSpace(inRoot(t, root, "getent", "passwd", "ibtracer"))
	m := passwdRe.FindStringSubmatch(pw)
	if m == nil {
		t.Fatalf("user: %q", pw)
	}
	if uid, _ := strconv.Atoi(m[1]); uid >= 1000 {
		t.Errorf("ibtracer has uid %d: not a system user", uid)
	}
	gr := strings.TrimSpace(inRoot(t, root, "getent", "group", "ibtracer"))
	if !strings.HasPrefix(gr, "ibtracer:x:"+m[2]+":") {
		t.Errorf("group: %q, want gid %s", gr, m[2])
	}
	t.Logf("user %s, group %s", pw, gr)
	if out := inRoot(t, root, "dpkg-query", "-W", "-f", "${Status} ${Version} ${Conffiles}\n", "ibtracer-exporter"); !strings.HasPrefix(out, "install ok installed "+v1+"-1") ||
		!strings.Contains(out, conf) || !strings.Contains(out, "/etc/default/ibtracer_exporter") {
		t.Errorf("dpkg-query: %s", out)
	}
	// The installed binary finds the installed configuration at its default path.
	if out := inRoot(t, root, "ibtracer_exporter", "--config.check"); out != conf+": ok\n" {
		t.Errorf("ibtracer_exporter --config.check in the root: %q", out)
	}
	if calls := systemctlCalls(t, root); !hasCall(calls, "daemon-reload") || hasCall(calls, "try-restart ibtracer_exporter.service") {
		t.Errorf("install: systemctl %q, want daemon-reload and no restart", calls)
	}

	// The unit, as systemd in the root sees it.
	if out, err := runRoot(root, "systemd-analyze", "verify", "/usr/lib/systemd/system/ibtracer_exporter.service"); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	checkUnitBootOrder(t, root)

	checkUdev(t, root, m[2])

	// Enable it, as the README says; change the configuration; upgrade.
	inRoot(t, root, "systemctl", "enable", "ibtracer_exporter")
	if !exists(root, wants) {
		t.Fatalf("systemctl enable made no %s", wants)
	}
	systemctlCalls(t, root)
	changed := readRoot(t, root, conf) + "# changed by the site\n"
	os.WriteFile(filepath.Join(root, conf), []byte(changed), 0o644)
	t.Logf("dpkg -i %s:\n%s", filepath.Base(debFile(dir2, v2, arch)), inRoot(t, root, "dpkg", "-i", "/tmp/v2.deb"))
	if got := readRoot(t, root, conf); got != changed {
		t.Errorf("upgrade replaced the changed configuration:\n%s", got)
	}
	if out := inRoot(t, root, "ibtracer_exporter", "--version"); !strings.HasPrefix(out, "ibtracer_exporter, version "+v2+" ") {
		t.Errorf("after the upgrade: %s", out)
	}
	if calls := systemctlCalls(t, root); !hasCall(calls, "try-restart ibtracer_exporter.service") {
		t.Errorf("upgrade: systemctl %q, want try-restart ibtracer_exporter.service", calls)
	}
	if !exists(root, wants) {
		t.Errorf("the upgrade disabled the service")
	}

	// Remove: stopped and disabled; the configuration stays.
	t.Logf("dpkg -r:\n%s", inRoot(t, root, "dpkg", "-r", "ibtracer-exporter"))
	calls := systemctlCalls(t, root)
	if !hasCall(calls, "stop ibtracer_exporter.service") || !hasCall(calls, "--no-reload disable ibtracer_exporter.service") {
		t.Errorf("remove: systemctl %q, want stop and disable", calls)
	}
	if exists(root, wants) {
		t.Errorf("removed, still enabled: %s", wants)
	}
	if exists(root, "/usr/bin/ibtracer_exporter") || !exists(root, conf) {
		t.Errorf("remove: binary there %v, configuration there %v", exists(root, "/usr/bin/ibtracer_exporter"), exists(root, conf))
	}

	// Purge: the package's configuration goes, a file the site keeps
	// beside it (a node-name map) stays, and so does the user.
	site := "/etc/ibtracer_exporter/node-name-map"
	if err := os.WriteFile(filepath.Join(root, site), []byte("0x1 \"db01\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("dpkg -P:\n%s", inRoot(t, root, "dpkg", "-P", "ibtracer-exporter"))
	for _, p := range []string{conf, "/etc/default/ibtracer_exporter"} {
		if exists(root, p) {
			t.Errorf("purge left %s", p)
		}
	}
	if !exists(root, site) {
		t.Errorf("purge removed %s, a file the package did not install", site)
	}
	if out := strings.TrimSpace(inRoot(t, root, "getent", "passwd", "ibtracer")); out != pw {
		t.Errorf("after the purge the user is %q, want %q", out, pw)
	}
}

// TestDebInstallWithoutSysusers: where systemd-sysusers is missing, the
// maintainer script makes the same user with useradd.
func TestDebInstallWithoutSysusers(t *testing.T) {
	dir := packages(t)
	arch := hostArch(t)
	root := debianRoot(t)
	b, err := os.ReadFile(debFile(dir, build.version, arch))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "tmp/v1.deb"), b, 0o644)
	inRoot(t, root, "dpkg-divert", "--quiet", "--rename", "--divert", "/usr/bin/systemd-sysusers.hidden", "/usr/bin/systemd-sysusers")
	inRoot(t, root, "dpkg", "-i", "/tmp/v1.deb")
	pw := strings.TrimSpace(inRoot(t, root, "getent", "passwd", "ibtracer"))
	m := passwdRe.FindStringSubmatch(pw)
	if m == nil {
		t.Fatalf("user: %q", pw)
	}
	if uid, _ := strconv.Atoi(m[1]); uid >= 1000 {
		t.Errorf("ibtracer has uid %d: not a system user", uid)
	}
	if gr := inRoot(t, root, "getent", "group", "ibtracer"); !strings.HasPrefix(gr, "ibtracer:x:"+m[2]+":") {
		t.Errorf("group %q, want gid %s", gr, m[2])
	}
	t.Logf("without systemd-sysusers: %s", pw)
}

// checkUdev: udev in the root reads the rule and knows its group; the
// rule, evaluated for a umad, an issm and a uverbs device, gives the
// group umad only; and on device nodes made as the rule says, the kernel
// lets the ibtracer user open umad0 (ENXIO: no driver behind it here)
// and refuses issm0 and uverbs0 (EACCES).
func checkUdev(t *testing.T, root, gid string) {
	t.Helper()
	// udevadm test runs every rule file on a device of the machine's
	// (/dev/null's): a rule udev cannot parse, or a group it does not
	// know, is reported under the file's name.
	const rule = "/usr/lib/udev/rules.d/91-ibtracer-umad.rules"
	out, _ := runRoot(root, "udevadm", "test", "--action=add", "/sys/devices/virtual/mem/null")
	read := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case l == "Reading rules file: "+rule:
			read = true
		case strings.Contains(l, path.Base(rule)):
			t.Errorf("udevadm: %s", l)
		}
	}
	if !read {
		t.Errorf("udevadm test did not read %s:\n%s", rule, out)
	}

	rules := parseUdevRules(t, readRoot(t, root, rule))
	devices := []struct {
		subsystem, kernel string
		minor             int
		want              string // GROUP MODE, or "" for none
	}{
		{"infiniband_mad", "umad0", 0, "ibtracer 0660"},
		{"infiniband_mad", "umad17", 17, "ibtracer 0660"},
		{"infiniband_mad", "issm0", 64, ""},
		{"infiniband_verbs", "uverbs0", 192, ""},
	}
	if err := os.MkdirAll(filepath.Join(root, "dev/infiniband"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range devices {
		group, mode := evalUdev(rules, "add", d.subsystem, d.kernel)
		if got := strings.TrimSpace(group + " " + mode); got != d.want {
			t.Errorf("udev rule for %s/%s: %q, want %q", d.subsystem, d.kernel, got, d.want)
		}
		// The node as udev makes it: root:root 0600 unless a rule says more.
		node := filepath.Join(root, "dev/infiniband", d.kernel)
		// umad, issm and uverbs share major 231; the minors differ.
		os.Remove(node)
		runFor(t, time.Minute, "mknod", "-m", "0600", node, "c", "231", strconv.Itoa(d.minor))
		if group == "ibtracer" {
			runFor(t, time.Minute, "chown", "0:"+gid, node)
			runFor(t, time.Minute, "chmod", mode, node)
		}
		out, err := runRoot(root, "chroot", "--userspec=ibtracer:ibtracer", "/", "sh", "-c", "exec 3<> /dev/infiniband/"+d.kernel)
		wantErr := "Permission denied"
		if d.want != "" {
			wantErr = "No such device or address"
		}
		if err == nil || !strings.Contains(out, wantErr) {
			t.Errorf("ibtracer opening /dev/infiniband/%s: %v %q, want %q", d.kernel, err, out, wantErr)
		} else {
			t.Logf("ibtracer opening /dev/infiniband/%s: %s", d.kernel, strings.TrimSpace(out))
		}
	}
}

// A udev rule line: its matches (key, ==/!=, glob) and assignments.
type udevRule struct {
	match  [][3]string
	assign map[string]string
	label  string
}

// parseUdevRules reads the keys a rule file of ours may use: ACTION,
// SUBSYSTEM and KERNEL matches, GROUP, MODE and GOTO assignments, and
// LABEL. Anything else fails the test: this is no general udev.
func parseUdevRules(t *testing.T, text string) []udevRule {
	t.Helper()
	var rules []udevRule
	kv := regexp.MustCompile(`^([A-Z]+)(==|!=|=)"([^"]*)"$`)
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		r := udevRule{assign: map[string]string{}}
		for _, part := range strings.Split(l, ",") {
			m := kv.FindStringSubmatch(strings.TrimSpace(part))
			switch {
			case m == nil:
				t.Fatalf("udev rule %q: cannot read %q", l, part)
			case m[2] != "=" && (m[1] == "ACTION" || m[1] == "SUBSYSTEM" || m[1] == "KERNEL"):
				r.match = append(r.match, [3]string{m[1], m[2], m[3]})
			case m[2] == "=" && (m[1] == "GROUP" || m[1] == "MODE" || m[1] == "GOTO"):
				r.assign[m[1]] = m[3]
			case m[2] == "=" && m[1] == "LABEL":
				r.label = m[3]
			default:
				t.Fatalf("udev rule %q: key %s%s not evaluated here", l, m[1], m[2])
			}
		}
		rules = append(rules, r)
	}
	return rules
}

// evalUdev applies rules to a device as udev does for these keys (a
// glob match per key, the last assignment wins, GOTO skips to its LABEL).
func evalUdev(rules []udevRule, action, subsystem, kernel string) (group, mode string) {
	val := map[string]string{"ACTION": action, "SUBSYSTEM": subsystem, "KERNEL": kernel}
	skipTo := ""
	for _, r := range rules {
		if skipTo != "" {
			if r.label == skipTo {
				skipTo = ""
			}
			continue
		}
		ok := true
		for _, m := range r.match {
			matched, _ := path.Match(m[2], val[m[0]])
			if matched != (m[1] == "==") {
				ok = false
			}
		}
		if !ok {
			continue
		}
		if g, has := r.assign["GROUP"]; has {
			group = g
		}
		if md, has := r.assign["MODE"]; has {
			mode = md
		}
		if to, has := r.assign["GOTO"]; has {
			skipTo = to
		}
	}
	return group, mode
}

// TestRPMInstallUpgradeErase installs the .rpm into a Debian root with
// this machine's rpm (--root runs the scriptlets in the root; --nodeps: the
// root is no RPM system), upgrades it with a changed configuration and
// erases it.
func TestRPMInstallUpgradeErase(t *testing.T) {
	dir := packages(t)
	promtest.RequireTool(t, "rpm", "rpm")
	arch := hostArch(t)
	root := debianRoot(t)
	dir2, v2 := upgradePackages(t, arch)
	installSystemctlLog(t, root)
	rpm := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		out, err := mounted(ctx, root, append([]string{"rpm", "--root", root, "--nodeps"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("rpm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	const conf = "/etc/ibtracer_exporter/ibtracer.yml"

	t.Logf("rpm -i:\n%s", rpm("-i", rpmFile(dir, build.version, arch)))
	pw := strings.TrimSpace(inRoot(t, root, "getent", "passwd", "ibtracer"))
	if passwdRe.FindStringSubmatch(pw) == nil {
		t.Fatalf("user: %q", pw)
	}
	if out := inRoot(t, root, "ibtracer_exporter", "--config.check"); out != conf+": ok\n" {
		t.Errorf("--config.check: %q", out)
	}
	if !exists(root, "/etc/sysconfig/ibtracer_exporter") || exists(root, "/etc/default/ibtracer_exporter") {
		t.Errorf("the rpm's arguments file is not /etc/sysconfig/ibtracer_exporter alone")
	}
	if calls := systemctlCalls(t, root); hasCall(calls, "try-restart ibtracer_exporter.service") {
		t.Errorf("install restarted the service: %q", calls)
	}

	changed := readRoot(t, root, conf) + "# changed by the site\n"
	os.WriteFile(filepath.Join(root, conf), []byte(changed), 0o644)
	t.Logf("rpm -U:\n%s", rpm("-U", rpmFile(dir2, v2, arch)))
	if got := readRoot(t, root, conf); got != changed {
		t.Errorf("upgrade replaced the changed configuration:\n%s", got)
	}
	if out := inRoot(t, root, "ibtracer_exporter", "--version"); !strings.HasPrefix(out, "ibtracer_exporter, version "+v2+" ") {
		t.Errorf("after the upgrade: %s", out)
	}
	if calls := systemctlCalls(t, root); !hasCall(calls, "try-restart ibtracer_exporter.service") ||
		hasCall(calls, "--no-reload disable ibtracer_exporter.service") {
		t.Errorf("upgrade: systemctl %q, want try-restart and no disable", calls)
	}

	t.Logf("rpm -e:\n%s", rpm("-e", "ibtracer-exporter"))
	if calls := systemctlCalls(t, root); !hasCall(calls, "stop ibtracer_exporter.service") ||
		!hasCall(calls, "--no-reload disable ibtracer_exporter.service") {
		t.Errorf("erase: systemctl %q, want stop and disable", calls)
	}
	if exists(root, "/usr/bin/ibtracer_exporter") || exists(root, conf) {
		t.Errorf("erase left the binary or the configuration")
	}
	if got, err := os.ReadFile(filepath.Join(root, conf+".rpmsave")); err != nil || string(got) != changed {
		t.Errorf("erase kept no %s.rpmsave of the changed configuration: %v", conf, err)
	}
	if out := strings.TrimSpace(inRoot(t, root, "getent", "passwd", "ibtracer")); out != pw {
		t.Errorf("after the erase the user is %q, want %q", out, pw)
	}
}
