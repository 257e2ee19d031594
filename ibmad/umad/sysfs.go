package umad

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// DefaultSysfs is where the kernel publishes InfiniBand devices.
const DefaultSysfs = "/sys"

// CA is an InfiniBand device from /sys/class/infiniband.
type CA struct {
	Name     string
	NodeType ibmad.NodeType
	NodeGUID ibmad.GUID
	NodeDesc string
	Ports    []Port
}

// Port is one port of a CA as sysfs describes it.
type Port struct {
	CA        string
	Num       uint8
	LinkLayer string // InfiniBand, Ethernet, Unknown
	State     ibmad.PortState
	PhysState ibmad.PhysState
	LID       uint16
	SMLID     uint16
	SMSL      uint8
	LMC       uint8
	CapMask   uint32
	GID       ibmad.GID
	Rate      string
}

// IsIB reports whether the port's link layer is InfiniBand (libibumad
// accepts "InfiniBand" and "IB"; a missing file means an old IB-only kernel).
func (p Port) IsIB() bool {
	return p.LinkLayer == "InfiniBand" || p.LinkLayer == "IB" || p.LinkLayer == ""
}

func readTrim(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// parseNum parses the way libibumad does (strtoul with base 0): the
// leading number of "0x5", "4: ACTIVE" or "100 Gb/sec".
func parseNum(s string) (uint64, error) {
	end := 0
	for end < len(s) && strings.ContainsRune("0123456789abcdefABCDEFxX", rune(s[end])) {
		end++
	}
	v, err := strconv.ParseUint(s[:end], 0, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

func readNum(path string) (uint64, error) {
	s, err := readTrim(path)
	if err != nil {
		return 0, err
	}
	v, err := parseNum(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// ListCAs reads every CA under root/class/infiniband, sorted by name.
func ListCAs(root string) ([]CA, error) {
	dir := filepath.Join(root, "class", "infiniband")
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no InfiniBand devices: %s does not exist; load the HCA driver and ib_umad (modprobe mlx5_ib ib_umad)", dir)
		}
		return nil, err
	}
	var cas []CA
	for _, e := range ents {
		ca, err := ReadCA(root, e.Name())
		if err != nil {
			return nil, err
		}
		cas = append(cas, ca)
	}
	sort.Slice(cas, func(i, j int) bool { return cas[i].Name < cas[j].Name })
	return cas, nil
}

// ReadCA reads one CA and its ports.
func ReadCA(root, name string) (CA, error) {
	dir := filepath.Join(root, "class", "infiniband", name)
	ca := CA{Name: name}
	nt, err := readNum(filepath.Join(dir, "node_type"))
	if err != nil {
		return ca, fmt.Errorf("CA %s: node_type: %w", name, err)
	}
	ca.NodeType = ibmad.NodeType(nt)
	if s, err := readTrim(filepath.Join(dir, "node_guid")); err == nil {
		if ca.NodeGUID, err = ibmad.ParseGUID(s); err != nil {
			return ca, fmt.Errorf("CA %s: node_guid: %w", name, err)
		}
	} else {
		return ca, fmt.Errorf("CA %s: %w", name, err)
	}
	ca.NodeDesc, _ = readTrim(filepath.Join(dir, "node_desc"))
	ents, err := os.ReadDir(filepath.Join(dir, "ports"))
	if err != nil {
		return ca, fmt.Errorf("CA %s: %w", name, err)
	}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n < 0 || n > 254 {
			continue
		}
		p, err := ReadPort(root, name, uint8(n))
		if err != nil {
			return ca, err
		}
		ca.Ports = append(ca.Ports, p)
	}
	sort.Slice(ca.Ports, func(i, j int) bool { return ca.Ports[i].Num < ca.Ports[j].Num })
	return ca, nil
}

// ReadPort reads one port's sysfs attributes.
func ReadPort(root, ca string, num uint8) (Port, error) {
	dir := filepath.Join(root, "class", "infiniband", ca, "ports", strconv.Itoa(int(num)))
	p := Port{CA: ca, Num: num}
	p.LinkLayer, _ = readTrim(filepath.Join(dir, "link_layer"))
	for _, f := range []struct {
		file string
		set  func(uint64)
		need bool
	}{
		{"state", func(v uint64) { p.State = ibmad.PortState(v) }, true},
		{"phys_state", func(v uint64) { p.PhysState = ibmad.PhysState(v) }, true},
		{"lid", func(v uint64) { p.LID = uint16(v) }, false},
		{"sm_lid", func(v uint64) { p.SMLID = uint16(v) }, false},
		{"sm_sl", func(v uint64) { p.SMSL = uint8(v) }, false},
		{"lid_mask_count", func(v uint64) { p.LMC = uint8(v) }, false},
		{"cap_mask", func(v uint64) { p.CapMask = uint32(v) }, false},
	} {
		v, err := readNum(filepath.Join(dir, f.file))
		if err != nil {
			if f.need || !errors.Is(err, os.ErrNotExist) {
				return p, fmt.Errorf("CA %s port %d: %w", ca, num, err)
			}
			continue
		}
		f.set(v)
	}
	if s, err := readTrim(filepath.Join(dir, "gids", "0")); err == nil {
		if g, err := ibmad.ParseGID(s); err == nil {
			p.GID = g
		}
	}
	p.Rate, _ = readTrim(filepath.Join(dir, "rate"))
	return p, nil
}

// ChoosePort picks the port to use as the OFED tools do (libibumad's
// umad_get_port / resolve_ca_port): with ca == "" the first CA that has a
// usable port; a switch uses port 0; otherwise the first Active IB port,
// else the first LinkUp one, else the first that is not Disabled. RoCE
// (Ethernet link layer) ports are skipped. An explicit ca or port that
// cannot be used is an error that says why.
func ChoosePort(root, ca string, port int) (Port, error) {
	var cas []CA
	if ca != "" {
		c, err := ReadCA(root, ca)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return Port{}, fmt.Errorf("CA %q not found under %s/class/infiniband (see `ibstat -l` for the names)", ca, root)
			}
			return Port{}, err
		}
		cas = []CA{c}
	} else {
		all, err := ListCAs(root)
		if err != nil {
			return Port{}, err
		}
		if len(all) == 0 {
			return Port{}, fmt.Errorf("no InfiniBand devices under %s/class/infiniband; load the HCA driver and ib_umad", root)
		}
		cas = all
	}
	var reasons []string
	for _, c := range cas {
		p, err := choosePortOf(c, port)
		if err == nil {
			return p, nil
		}
		if ca != "" {
			return Port{}, err
		}
		reasons = append(reasons, err.Error())
	}
	return Port{}, fmt.Errorf("no usable InfiniBand port: %s", strings.Join(reasons, "; "))
}

func choosePortOf(c CA, port int) (Port, error) {
	if c.NodeType == ibmad.NodeTypeSwitch {
		for _, p := range c.Ports {
			if p.Num == 0 && (port <= 0) {
				return p, nil
			}
		}
		if port > 0 {
			return Port{}, fmt.Errorf("CA %s is a switch: MADs go through its management port 0, not port %d", c.Name, port)
		}
		return Port{}, fmt.Errorf("CA %s is a switch without port 0 in sysfs", c.Name)
	}
	if port > 0 {
		for _, p := range c.Ports {
			if int(p.Num) != port {
				continue
			}
			switch {
			case !p.IsIB():
				return Port{}, fmt.Errorf("CA %s port %d has link layer %s (RoCE): InfiniBand MADs need an InfiniBand port", c.Name, port, p.LinkLayer)
			case p.PhysState == ibmad.PhysStateDisabled:
				return Port{}, fmt.Errorf("CA %s port %d is disabled (phys_state Disabled)", c.Name, port)
			}
			return p, nil
		}
		return Port{}, fmt.Errorf("CA %s has no port %d", c.Name, port)
	}
	var ib []Port
	var skipped []string
	for _, p := range c.Ports {
		if p.Num == 0 {
			continue
		}
		if !p.IsIB() {
			skipped = append(skipped, fmt.Sprintf("port %d is %s (RoCE)", p.Num, p.LinkLayer))
			continue
		}
		ib = append(ib, p)
	}
	for _, p := range ib {
		if p.State == ibmad.PortStateActive {
			return p, nil
		}
	}
	for _, p := range ib {
		if p.PhysState == ibmad.PhysStateLinkUp {
			return p, nil
		}
	}
	for _, p := range ib {
		if p.PhysState != ibmad.PhysStateDisabled {
			return p, nil
		}
		skipped = append(skipped, fmt.Sprintf("port %d is disabled", p.Num))
	}
	if len(skipped) == 0 {
		skipped = append(skipped, "it has no ports")
	}
	return Port{}, fmt.Errorf("CA %s: no usable InfiniBand port (%s)", c.Name, strings.Join(skipped, ", "))
}

// DeviceIndex finds N such that root/class/infiniband_mad/umadN names
// (ca, port), scanning N as libibumad does.
func DeviceIndex(root, ca string, port uint8) (int, error) {
	dir := filepath.Join(root, "class", "infiniband_mad")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return -1, fmt.Errorf("%s: %w; load the ib_umad module (modprobe ib_umad)", dir, err)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "umad") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "umad"))
		if err != nil {
			continue
		}
		dev, err1 := readTrim(filepath.Join(dir, e.Name(), "ibdev"))
		p, err2 := readNum(filepath.Join(dir, e.Name(), "port"))
		if err1 == nil && err2 == nil && dev == ca && p == uint64(port) {
			return n, nil
		}
	}
	return -1, fmt.Errorf("no umad device for CA %s port %d under %s; is ib_umad loaded (modprobe ib_umad)?", ca, port, dir)
}
