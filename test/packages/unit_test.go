package packages

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// openibdStandIn is a unit named as MLNX_OFED's openibd.service, which
// Debian does not ship: a oneshot that loads the stack early, as openibd
// does. Only its name and its place in the boot matter here.
const openibdStandIn = `[Unit]
Description=stand-in for MLNX_OFED's openibd.service (test/packages)
DefaultDependencies=no
Before=network-pre.target
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/true
`

// umadMajor is ib_umad's fixed character major (IB_UMAD_MAJOR in the
// kernel's drivers/infiniband/core/user_mad.c): umad0 to umad63.
const umadMajor = "231"

// checkUnitBootOrder: systemd in the root, on the installed unit
// (docs/packaging.md, "Boot order"). The root has rdma-core, so
// rdma-load-modules@.service is rdma-core's own; openibd.service is the
// stand-in above. systemd-analyze verify builds the unit's start
// transaction: it must pull in both module loaders and order the service
// after them, without an ordering cycle. And the unit's DeviceAllow=, as
// systemd parsed it, must allow umad's major by number (resolved without
// /proc/devices or a device node when the service starts) and name no
// device path (resolved by stat() then: a node not there yet allows
// nothing).
func checkUnitBootOrder(t *testing.T, root string) {
	t.Helper()
	const unit = "/usr/lib/systemd/system/ibtracer_exporter.service"
	if !exists(root, "/usr/lib/systemd/system/rdma-load-modules@.service") && !exists(root, "/lib/systemd/system/rdma-load-modules@.service") {
		t.Fatalf("the root has no rdma-load-modules@.service: rdma-core is not installed (rootPackages)")
	}
	standIn := filepath.Join(root, "etc/systemd/system/openibd.service")
	if err := os.WriteFile(standIn, []byte(openibdStandIn), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(standIn)

	// At the default level: silent (no ordering cycle, no unknown setting).
	if out, err := runRoot(root, "systemd-analyze", "verify", unit); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("systemd-analyze verify with rdma-core and openibd.service present: %v\n%s", err, out)
	}

	// At debug level: the unit as systemd parsed it (stdout) and the jobs
	// of its start transaction (stderr).
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var dump, log bytes.Buffer
	cmd := chroot(ctx, root, "env", "SYSTEMD_LOG_LEVEL=debug", "systemd-analyze", "verify", unit)
	cmd.Stdout, cmd.Stderr = &dump, &log
	if err := cmd.Run(); err != nil {
		t.Fatalf("systemd-analyze verify at debug level: %v\n%s", err, log.String())
	}
	for _, loader := range []string{"rdma-load-modules@infiniband.service", "openibd.service"} {
		if !strings.Contains(log.String(), "Installed new job "+loader+"/start") {
			t.Errorf("starting ibtracer_exporter.service does not start %s (Wants=)", loader)
		}
		if !regexp.MustCompile(`(?m)^\s+After: ` + regexp.QuoteMeta(loader) + ` `).Match(dump.Bytes()) {
			t.Errorf("ibtracer_exporter.service is not ordered after %s (After=)", loader)
		}
	}
	allow := regexp.MustCompile(`(?m)^\s+DeviceAllow: (\S+) (\S+)$`).FindAllStringSubmatch(dump.String(), -1)
	if len(allow) == 0 {
		t.Fatalf("systemd's dump of the unit shows no DeviceAllow:\n%s", dump.String())
	}
	byNumber := false
	var entries []string
	for _, a := range allow {
		entries = append(entries, a[1]+" "+a[2])
		switch {
		case a[1] == "char-"+umadMajor || strings.HasPrefix(a[1], "/dev/char/"+umadMajor+":"):
			byNumber = byNumber || (strings.Contains(a[2], "r") && strings.Contains(a[2], "w"))
		case strings.HasPrefix(a[1], "/dev/") && !strings.HasPrefix(a[1], "/dev/char/") && !strings.HasPrefix(a[1], "/dev/block/"):
			t.Errorf("DeviceAllow=%s %s: a device path, allowed only if the node exists when the service starts", a[1], a[2])
		}
	}
	if !byNumber {
		t.Errorf("DeviceAllow= %q: nothing allows umad's major %s by number (rw) whether or not ib_umad is loaded", entries, umadMajor)
	}
	t.Logf("DeviceAllow as systemd parsed it: %q", entries)
}
