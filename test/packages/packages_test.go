// Package packages checks what `make package` ships (docs/packaging.md),
// from outside, without installing anything on this machine: the .deb
// and .rpm's metadata and files through dpkg-deb and rpm -qp, the packaged
// binaries and configuration run from an extracted copy, the release
// tarballs' files, and (install_test.go) an install, upgrade and purge of
// the .deb in a Debian root of its own.
package packages

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
)

const repo = "../.."

// archs are the architectures the tests build; make package adds ppc64le.
// rpmArch names them as rpm does (dpkg's names are Go's for these).
var (
	archs   = []string{"amd64", "arm64"}
	rpmArch = map[string]string{"amd64": "x86_64", "arm64": "aarch64"}
)

var build struct {
	once    sync.Once
	dir     string // the packages of the VERSION file's version
	version string
	err     error
	out     []byte
}

// version is the VERSION file's.
func version(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(b))
	if !regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?$`).MatchString(v) {
		t.Fatalf("VERSION %q is not MAJOR.MINOR.PATCH", v)
	}
	return v
}

// makePackage runs make package for archs into dir at version v.
func makePackage(dir, v string, archs ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-C", repo, "--no-print-directory", "package", "DIST="+dir,
		"PKG_ARCHS="+strings.Join(archs, " "), "VERSION="+v)
	return cmd.CombinedOutput()
}

// packages builds the packages once for every test of the package and
// returns their directory. Not in -short: it compiles for two
// architectures.
func packages(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the packages: not in -short")
	}
	promtest.RequireTool(t, "make", "make")
	v := version(t)
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "ibtracer-packages-")
		if build.err == nil {
			build.version = v
			build.out, build.err = makePackage(build.dir, v, archs...)
		}
	})
	if build.err != nil {
		t.Fatalf("make package: %v\n%s", build.err, build.out)
	}
	return build.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range []string{build.dir, upgrade.dir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

func debFile(dir, v, arch string) string {
	return filepath.Join(dir, "ibtracer-exporter_"+v+"-1_"+arch+".deb")
}

func rpmFile(dir, v, arch string) string {
	return filepath.Join(dir, "ibtracer-exporter-"+v+"-1."+rpmArch[arch]+".rpm")
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The files both packages must hold, beside the per-format ones below.
var common = []string{
	"/usr/bin/ibtracer_exporter",
	"/usr/bin/ibtracer",
	"/usr/lib/systemd/system/ibtracer_exporter.service",
	"/usr/lib/sysusers.d/ibtracer_exporter.conf",
	"/usr/lib/udev/rules.d/91-ibtracer-umad.rules",
	"/etc/ibtracer_exporter/ibtracer.yml",
	"/usr/share/ibtracer_exporter/ibtracer.shard.rules.yml",
	"/usr/share/ibtracer_exporter/ibtracer.rules.yml",
	"/usr/share/ibtracer_exporter/ibtracer.json",
	"/usr/share/man/man1/ibtracer_exporter.1.gz",
	"/usr/share/man/man1/ibtracer.1.gz",
	"/usr/share/bash-completion/completions/ibtracer_exporter",
	"/usr/share/bash-completion/completions/ibtracer",
	"/usr/share/doc/ibtracer-exporter/config.example.yml",
}

var (
	debOnly = []string{"/etc/default/ibtracer_exporter", "/usr/share/zsh/vendor-completions/_ibtracer_exporter",
		"/usr/share/zsh/vendor-completions/_ibtracer", "/usr/share/doc/ibtracer-exporter/copyright"}
	rpmOnly = []string{"/etc/sysconfig/ibtracer_exporter", "/usr/share/zsh/site-functions/_ibtracer_exporter",
		"/usr/share/zsh/site-functions/_ibtracer", "/usr/share/licenses/ibtracer-exporter/LICENSE"}
	conffiles = map[string][]string{
		"deb": {"/etc/default/ibtracer_exporter", "/etc/ibtracer_exporter/ibtracer.yml"},
		"rpm": {"/etc/ibtracer_exporter/ibtracer.yml", "/etc/sysconfig/ibtracer_exporter"},
	}
)

// hasAll fails for each of want missing from have.
func hasAll(t *testing.T, what string, have map[string]bool, want ...[]string) {
	t.Helper()
	for _, w := range want {
		for _, f := range w {
			if !have[f] {
				t.Errorf("%s: no %s", what, f)
			}
		}
	}
}

func TestDeb(t *testing.T) {
	dir := packages(t)
	promtest.RequireTool(t, "dpkg-deb", "dpkg")
	v := build.version
	for _, arch := range archs {
		deb := debFile(dir, v, arch)
		t.Run(arch, func(t *testing.T) {
			for field, want := range map[string]string{"Package": "ibtracer-exporter", "Version": v + "-1", "Architecture": arch} {
				if got := strings.TrimSpace(run(t, "dpkg-deb", "-f", deb, field)); got != want {
					t.Errorf("%s: %s %q, want %q", deb, field, got, want)
				}
			}
			have := map[string]bool{}
			modes := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(run(t, "dpkg-deb", "-c", deb)), "\n") {
				f := strings.Fields(line)
				name := strings.TrimSuffix(strings.TrimPrefix(f[len(f)-1], "."), "/")
				have[name] = true
				modes[name] = f[0] + " " + f[1]
			}
			hasAll(t, deb, have, common, debOnly)
			for _, bin := range []string{"/usr/bin/ibtracer_exporter", "/usr/bin/ibtracer"} {
				if modes[bin] != "-rwxr-xr-x root/root" {
					t.Errorf("%s: %s is %s", deb, bin, modes[bin])
				}
			}
			ctl := t.TempDir()
			run(t, "dpkg-deb", "-e", deb, ctl)
			b, _ := os.ReadFile(filepath.Join(ctl, "conffiles"))
			if got := strings.Fields(string(b)); strings.Join(got, " ") != strings.Join(conffiles["deb"], " ") {
				t.Errorf("%s: conffiles %q, want %q", deb, got, conffiles["deb"])
			}
			checkScripts(t, deb, ctl)
		})
	}
}

// checkScripts: the maintainer scripts create the user through sysusers.d
// with a fallback, and stop, disable and restart the service.
func checkScripts(t *testing.T, pkg, ctl string) {
	t.Helper()
	read := func(n string) string { b, _ := os.ReadFile(filepath.Join(ctl, n)); return string(b) }
	post, prerm, postrm := read("postinst"), read("prerm"), read("postrm")
	for _, c := range []struct{ script, has string }{
		{post, "systemd-sysusers ibtracer_exporter.conf"},
		{post, "useradd --system --gid ibtracer"},
		{post, "systemctl try-restart ibtracer_exporter.service"},
		{prerm, "systemctl --no-reload disable ibtracer_exporter.service"},
		{prerm, "systemctl stop ibtracer_exporter.service"},
		{postrm, "rmdir --ignore-fail-on-non-empty /etc/ibtracer_exporter"},
	} {
		if !strings.Contains(c.script, c.has) {
			t.Errorf("%s: no maintainer script runs %q", pkg, c.has)
		}
	}
}

func TestRPM(t *testing.T) {
	dir := packages(t)
	promtest.RequireTool(t, "rpm", "rpm")
	v := build.version
	for _, arch := range archs {
		rpm := rpmFile(dir, v, arch)
		t.Run(arch, func(t *testing.T) {
			got := strings.TrimSpace(run(t, "rpm", "-qp", "--qf", "%{NAME} %{VERSION} %{RELEASE} %{ARCH} %{OS} %{LICENSE}", rpm))
			if want := "ibtracer-exporter " + v + " 1 " + rpmArch[arch] + " linux Apache-2.0"; got != want {
				t.Errorf("%s: %q, want %q", rpm, got, want)
			}
			have := map[string]bool{}
			flags := map[string]string{}
			modes := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(run(t, "rpm", "-qp", "--qf",
				"[%{FILENAMES} %{FILEFLAGS:fflags} %{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME}\n]", rpm)), "\n") {
				f := strings.Fields(line)
				if len(f) == 3 { // no flags
					f = []string{f[0], "", f[1], f[2]}
				}
				have[f[0]], flags[f[0]], modes[f[0]] = true, f[1], f[2]+" "+f[3]
			}
			hasAll(t, rpm, have, common, rpmOnly)
			// %config(noreplace): c and n.
			for _, c := range conffiles["rpm"] {
				if flags[c] != "cn" {
					t.Errorf("%s: %s has flags %q, want cn (%%config(noreplace))", rpm, c, flags[c])
				}
			}
			if strings.TrimSpace(run(t, "rpm", "-qpc", rpm)) != strings.Join(conffiles["rpm"], "\n") {
				t.Errorf("%s: rpm -qc:\n%s", rpm, run(t, "rpm", "-qpc", rpm))
			}
			for _, bin := range []string{"/usr/bin/ibtracer_exporter", "/usr/bin/ibtracer"} {
				if modes[bin] != "-rwxr-xr-x root:root" {
					t.Errorf("%s: %s is %s", rpm, bin, modes[bin])
				}
			}
			// The scriptlets, and what each is given: rpm's counts.
			scripts := run(t, "rpm", "-qp", "--scripts", rpm)
			for _, s := range []string{"postinstall scriptlet", "preuninstall scriptlet", "postuninstall scriptlet"} {
				if !strings.Contains(scripts, s) {
					t.Errorf("%s: no %s", rpm, s)
				}
			}
			ctl := t.TempDir()
			parts := regexp.MustCompile(`(?m)^\S+ scriptlet \(using /bin/sh\):\n`).Split(scripts, -1)
			if len(parts) == 4 {
				os.WriteFile(filepath.Join(ctl, "postinst"), []byte(parts[1]), 0o644)
				os.WriteFile(filepath.Join(ctl, "prerm"), []byte(parts[2]), 0o644)
				os.WriteFile(filepath.Join(ctl, "postrm"), []byte(parts[3]), 0o644)
			}
			checkScripts(t, rpm, ctl)
		})
	}
}

// extract unpacks the host architecture's .deb into a new directory.
func extract(t *testing.T) string {
	t.Helper()
	dir := packages(t)
	promtest.RequireTool(t, "dpkg-deb", "dpkg")
	root := t.TempDir()
	run(t, "dpkg-deb", "-x", debFile(dir, build.version, hostArch(t)), root)
	return root
}

func hostArch(t *testing.T) string {
	t.Helper()
	a := strings.TrimSpace(run(t, "go", "env", "GOARCH"))
	for _, x := range archs {
		if x == a {
			return a
		}
	}
	t.Skipf("the tests build no package for %s", a)
	return ""
}

// The packaged binaries run and say the VERSION file's version; the
// packaged configuration passes --config.check; the unit starts a file of
// the package.
func TestPackagedBinariesAndConfig(t *testing.T) {
	root := extract(t)
	for _, bin := range []string{"ibtracer_exporter", "ibtracer"} {
		out := run(t, filepath.Join(root, "usr/bin", bin), "--version")
		if !strings.HasPrefix(out, bin+", version "+build.version+" ") {
			t.Errorf("%s --version: %s", bin, out)
		}
	}
	cfg := filepath.Join(root, "etc/ibtracer_exporter/ibtracer.yml")
	if out := run(t, filepath.Join(root, "usr/bin/ibtracer_exporter"), "--config.check", "--config.file="+cfg); out != cfg+": ok\n" {
		t.Errorf("--config.check: %q", out)
	}
	// The safe default: the agent on, a small discovered sample, a MAD budget.
	b, _ := os.ReadFile(cfg)
	for _, re := range []string{`(?m)^agent:\n  enabled: true$`, `(?m)^discover:\n  - all: true\n    sample: [1-9]\d?$`, `(?m)^mad_rate: [1-9]`} {
		if !regexp.MustCompile(re).Match(b) {
			t.Errorf("packaged configuration does not match %s:\n%s", re, b)
		}
	}

	unit, _ := os.ReadFile(filepath.Join(root, "usr/lib/systemd/system/ibtracer_exporter.service"))
	m := regexp.MustCompile(`(?m)^ExecStart=(\S+)`).FindSubmatch(unit)
	if m == nil || string(m[1]) != "/usr/bin/ibtracer_exporter" {
		t.Fatalf("ExecStart: %q", m)
	}
	if st, err := os.Stat(filepath.Join(root, string(m[1]))); err != nil || st.Mode()&0o111 == 0 {
		t.Errorf("ExecStart %s is not an executable of the package: %v", m[1], err)
	}
	for _, env := range []string{"EnvironmentFile=-/etc/default/ibtracer_exporter", "EnvironmentFile=-/etc/sysconfig/ibtracer_exporter", "User=ibtracer"} {
		if !bytes.Contains(unit, []byte("\n"+env+"\n")) {
			t.Errorf("unit has no %s", env)
		}
	}
	if bytes.Contains(unit, []byte("/usr/local")) || bytes.Contains(unit, []byte("SupplementaryGroups=rdma")) {
		t.Errorf("unit still names /usr/local or the rdma group")
	}
}

// The man pages: a one-line .TH with the version, NAME as "name \- what",
// and no trace of the version block kingpin used to put there.
func TestManPages(t *testing.T) {
	root := extract(t)
	for _, cmd := range []string{"ibtracer_exporter", "ibtracer"} {
		page := run(t, "sh", "-c", "gzip -dc "+filepath.Join(root, "usr/share/man/man1", cmd+".1.gz"))
		lines := strings.SplitN(page, "\n", 4)
		th := `.TH "` + strings.ToUpper(cmd) + `" 1 "\d{4}\\-\d\d\\-\d\d" "` + cmd + " " + regexp.QuoteMeta(strings.ReplaceAll(build.version, "-", `\-`)) + `" "User Commands"`
		if !regexp.MustCompile("^" + th + "$").MatchString(lines[0]) {
			t.Errorf("%s.1: .TH line %q, want %s", cmd, lines[0], th)
		}
		if lines[1] != `.SH "NAME"` || !strings.HasPrefix(lines[2], cmd+` \- `) {
			t.Errorf("%s.1: NAME section %q", cmd, lines[1:3])
		}
		if strings.Contains(page, "build user") || strings.Contains(page, "go version") {
			t.Errorf("%s.1: holds the version block", cmd)
		}
		if !strings.Contains(page, `\fB-h, --help\fR`) {
			t.Errorf("%s.1: no options", cmd)
		}
		// man renders it with NAME first, when man is here.
		if man, err := exec.LookPath("man"); err == nil {
			out, err := exec.Command(man, "-l", "-P", "cat", filepath.Join(root, "usr/share/man/man1", cmd+".1.gz")).Output()
			head, _, _ := strings.Cut(string(out), "\nNAME\n")
			if err != nil || len(out) == 0 || len(head) == len(out) || strings.Contains(head, "build") {
				t.Errorf("man -l %s.1: %v\n%.400s", cmd, err, out)
			}
		}
	}
	for _, f := range []string{"usr/share/bash-completion/completions/ibtracer", "usr/share/zsh/vendor-completions/_ibtracer"} {
		b, _ := os.ReadFile(filepath.Join(root, f))
		if !bytes.Contains(b, []byte("ibtracer --completion-bash")) && !bytes.Contains(b, []byte("--completion-bash")) {
			t.Errorf("%s: not a completion of ibtracer:\n%s", f, b)
		}
	}
}

// The udev rule gives the ibtracer group umad* and nothing else.
func TestUdevRuleText(t *testing.T) {
	root := extract(t)
	b, _ := os.ReadFile(filepath.Join(root, "usr/lib/udev/rules.d/91-ibtracer-umad.rules"))
	var assign []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "GROUP=") || strings.Contains(l, "MODE=") {
			assign = append(assign, l)
		}
	}
	if len(assign) != 1 || assign[0] != `SUBSYSTEM=="infiniband_mad", KERNEL=="umad[0-9]*", GROUP="ibtracer", MODE="0660"` {
		t.Errorf("udev rule assignments: %q", assign)
	}
	su, _ := os.ReadFile(filepath.Join(root, "usr/lib/sysusers.d/ibtracer_exporter.conf"))
	if !regexp.MustCompile(`(?m)^u ibtracer - "[^"]*" /nonexistent /usr/sbin/nologin$`).Match(su) {
		t.Errorf("sysusers.d: %s", su)
	}
}

func TestTarballs(t *testing.T) {
	dir := packages(t)
	for _, arch := range archs {
		name := "ibtracer_exporter-" + build.version + ".linux-" + arch
		out := run(t, "tar", "-tzvf", filepath.Join(dir, name+".tar.gz"))
		have := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(l)
			have[f[len(f)-1]] = true
			if f[1] != "0/0" {
				t.Errorf("%s: %s owned by %s", name, f[len(f)-1], f[1])
			}
		}
		for _, f := range []string{"ibtracer_exporter", "ibtracer", "LICENSE", "config.example.yml", "ibtracer.yml",
			"ibtracer_exporter.service", "ibtracer_exporter.default", "91-ibtracer-umad.rules",
			"ibtracer.shard.rules.yml", "ibtracer.rules.yml", "ibtracer.json"} {
			if !have[name+"/"+f] {
				t.Errorf("%s.tar.gz: no %s", name, f)
			}
		}
	}
}

// CHANGELOG.md has a section for the VERSION file's version, in the
// Prometheus projects' form "## 0.1.0 / 2026-11-26".
func TestChangelogHasTheVersion(t *testing.T) {
	v := version(t)
	b, err := os.ReadFile(filepath.Join(repo, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^## ` + regexp.QuoteMeta(v) + ` / \d{4}-\d\d-\d\d$`).Match(b) {
		t.Errorf("CHANGELOG.md has no section \"## %s / YYYY-MM-DD\"", v)
	}
}
