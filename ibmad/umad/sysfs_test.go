package umad

import (
	"errors"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

func fixture(name string) string { return "testdata/sysfs/" + name }

func TestChoosePort(t *testing.T) {
	for _, tc := range []struct {
		name, root, ca string
		port           int
		wantCA         string
		wantPort       uint8
		wantErr        string
	}{
		{name: "default skips the down port", root: "dual-mlx5", wantCA: "mlx5_0", wantPort: 2},
		{name: "explicit down port is allowed", root: "dual-mlx5", ca: "mlx5_0", port: 1, wantCA: "mlx5_0", wantPort: 1},
		{name: "RoCE CA", root: "dual-mlx5", ca: "mlx5_1", wantErr: "CA mlx5_1 has no usable InfiniBand port (mlx5_1 port 1 is RoCE, link layer Ethernet): ibtracer needs an InfiniBand port: a RoCE port has no subnet manager, LIDs or SMPs to trace"},
		{name: "RoCE port", root: "dual-mlx5", ca: "mlx5_1", port: 1, wantErr: "CA mlx5_1 port 1 is RoCE (link layer Ethernet): ibtracer needs an InfiniBand port: a RoCE port has no subnet manager, LIDs or SMPs to trace"},
		{name: "no such port", root: "dual-mlx5", ca: "mlx5_0", port: 3, wantErr: "CA mlx5_0 has no port 3"},
		{name: "no such CA", root: "dual-mlx5", ca: "mlx9_9", wantErr: "CA \"mlx9_9\" not found under testdata/sysfs/dual-mlx5/class/infiniband (see `ibstat -l` for the names)"},
		{name: "LinkUp when nothing is Active", root: "linkup-only", wantCA: "mlx4_0", wantPort: 2},
		{name: "disabled port", root: "linkup-only", ca: "mlx4_0", port: 1, wantErr: "CA mlx4_0 port 1 is disabled (phys_state Disabled)"},
		{name: "switch uses port 0", root: "switch", wantCA: "switch0", wantPort: 0},
		{name: "switch external port", root: "switch", ca: "switch0", port: 3, wantErr: "CA switch0 is a switch: MADs go through its management port 0, not port 3"},
		{name: "RoCE only", root: "roce-only", wantErr: "no usable InfiniBand port (mlx5_0 port 1 is RoCE, link layer Ethernet): ibtracer needs an InfiniBand port: a RoCE port has no subnet manager, LIDs or SMPs to trace"},
		// An InfiniBand port that is down on the first CA, a RoCE port that
		// is Active on the second, an Active InfiniBand port on the third:
		// libibumad's resolve_ca_name takes the first CA with an Active IB
		// port; a down one is only the fallback.
		{name: "mixed: first Active InfiniBand port", root: "mixed-roce", wantCA: "mlx5_2", wantPort: 1},
		{name: "mixed: the RoCE CA asked for", root: "mixed-roce", ca: "mlx5_1", wantErr: "CA mlx5_1 has no usable InfiniBand port (mlx5_1 port 1 is RoCE, link layer Ethernet): ibtracer needs an InfiniBand port: a RoCE port has no subnet manager, LIDs or SMPs to trace"},
		{name: "mixed: a down IB port asked for", root: "mixed-roce", ca: "mlx5_0", wantCA: "mlx5_0", wantPort: 1},
		{name: "missing state file", root: "missing-files", wantErr: "CA mlx5_0 port 1: open testdata/sysfs/missing-files/class/infiniband/mlx5_0/ports/1/state: no such file or directory"},
		{name: "no devices", root: "no-devices", wantErr: "no InfiniBand devices: testdata/sysfs/no-devices/class/infiniband does not exist; load the HCA driver and ib_umad (modprobe mlx5_ib ib_umad)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ChoosePort(fixture(tc.root), tc.ca, tc.port)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("got %v\nwant %s", err, tc.wantErr)
				}
				if roce := strings.Contains(tc.wantErr, "RoCE"); errors.Is(err, ErrRoCEPort) != roce {
					t.Fatalf("%v: wraps ErrRoCEPort %v, want %v", err, !roce, roce)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.CA != tc.wantCA || p.Num != tc.wantPort {
				t.Fatalf("chose %s port %d, want %s port %d", p.CA, p.Num, tc.wantCA, tc.wantPort)
			}
		})
	}
}

func TestReadPortParsesSysfsFormats(t *testing.T) {
	p, err := ReadPort(fixture("dual-mlx5"), "mlx5_0", 2)
	if err != nil {
		t.Fatal(err)
	}
	if p.State != ibmad.PortStateActive || p.PhysState != ibmad.PhysStateLinkUp || p.LID != 0x1a || p.SMLID != 1 ||
		p.LMC != 1 || p.CapMask != 0x2651e848 || p.GID.GUID() != 0x0002c90300a1b2c5 || p.Rate != "100 Gb/sec (4X EDR)" {
		t.Fatalf("%+v", p)
	}
	ca, err := ReadCA(fixture("dual-mlx5"), "mlx5_0")
	if err != nil || ca.NodeGUID != 0x0002c90300a1b2c3 || ca.NodeType != ibmad.NodeTypeCA || ca.NodeDesc != "node01 mlx5_0" || len(ca.Ports) != 2 {
		t.Fatalf("%v %+v", err, ca)
	}
	for in, want := range map[string]uint64{"0x5": 5, "4: ACTIVE": 4, "100 Gb/sec": 100, "2.5 Gb/sec": 2, "0x2651e848": 0x2651e848} {
		if v, err := parseNum(in); err != nil || v != want {
			t.Errorf("parseNum(%q) = %d, %v", in, v, err)
		}
	}
	if _, err := parseNum("ACTIVE"); err == nil {
		t.Error("parseNum(ACTIVE) accepted")
	}
}

func TestDeviceIndex(t *testing.T) {
	if n, err := DeviceIndex(fixture("dual-mlx5"), "mlx5_0", 2); err != nil || n != 1 {
		t.Fatalf("%d %v", n, err)
	}
	if n, err := DeviceIndex(fixture("switch"), "switch0", 0); err != nil || n != 0 {
		t.Fatalf("%d %v", n, err)
	}
	if _, err := DeviceIndex(fixture("dual-mlx5"), "mlx5_0", 7); err == nil || !strings.Contains(err.Error(), "modprobe ib_umad") {
		t.Fatalf("got %v", err)
	}
}
