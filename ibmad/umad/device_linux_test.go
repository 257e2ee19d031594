package umad

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenPermissionDenied: a user without access to the device gets an
// error naming the device file and the permission needed. Root bypasses
// file modes, so as root the check runs in a child process as nobody.
func TestOpenPermissionDenied(t *testing.T) {
	if path := os.Getenv("UMAD_PERM_CHILD"); path != "" {
		_, err := openDevice(path)
		if err == nil {
			t.Fatal("opened a device without permission")
		}
		os.Stdout.WriteString("ERR:" + err.Error() + "\n")
		return
	}
	// Not t.TempDir: its parent is private to root, and the child runs as nobody.
	dir, err := os.MkdirTemp("", "umad-perm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dev := filepath.Join(dir, "umad0")
	if err := os.WriteFile(dev, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var out string
	if os.Getuid() != 0 {
		if err := os.Chmod(dev, 0); err != nil {
			t.Fatal(err)
		}
		_, err := openDevice(dev)
		if err == nil {
			t.Fatal("opened a mode-000 file")
		}
		out = "ERR:" + err.Error()
	} else {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		// The test binary must be reachable by nobody.
		copyExe := filepath.Join(dir, "umad.test")
		b, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(copyExe, b, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(copyExe, "-test.run", "^TestOpenPermissionDenied$")
		cmd.Env = []string{"UMAD_PERM_CHILD=" + dev}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		o, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, o)
		}
		out = string(o)
	}
	if !strings.Contains(out, "ERR:cannot open "+dev+": permission denied; the exporter needs read-write access to /dev/infiniband/umad*") ||
		!strings.Contains(out, "udev rule") {
		t.Fatalf("got %q", out)
	}
}

// TestOpenErrorNotPermitted: EPERM on open, where file modes would give
// EACCES, is what a device cgroup answers (a systemd unit's
// DevicePolicy=/DeviceAllow=, computed when the service started). The
// message says so and what to do, and the error stays a permission error
// (device_down_reason "permission").
func TestOpenErrorNotPermitted(t *testing.T) {
	const dev = "/dev/infiniband/umad0"
	err := openError(dev, unix.EPERM)
	if !errors.Is(err, os.ErrPermission) || !errors.Is(err, unix.EPERM) {
		t.Fatalf("%v: not a permission error wrapping EPERM", err)
	}
	for _, want := range []string{"cannot open " + dev + ": operation not permitted", "device cgroup",
		"DeviceAllow=char-231", "when the service started", "restart"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("EPERM: %q lacks %q", err, want)
		}
	}
	// EACCES is the file's mode or owner: the message says how to give access.
	err = openError(dev, unix.EACCES)
	if !errors.Is(err, os.ErrPermission) || !strings.Contains(err.Error(), "permission denied") ||
		!strings.Contains(err.Error(), "udev rule") || strings.Contains(err.Error(), "device cgroup") {
		t.Errorf("EACCES: %q", err)
	}
}
