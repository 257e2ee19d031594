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
			return nil, missing(fmt.Sprintf("no InfiniBand devices: %s does not exist; load the HCA driver and ib_umad (modprobe mlx5_ib ib_umad)", dir))
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

// ErrNoDevice is wrapped by the errors that find no InfiniBand device, or
// not the CA asked for.
var ErrNoDevice = errors.New("no InfiniBand devices")

// missing is an error about a device that is not there, whose message
// says what to do; it wraps ErrNoDevice.
type missing string

func (m missing) Error() string        { return string(m) }
func (m missing) Is(target error) bool { return target == ErrNoDevice }

// ErrRoCEPort is wrapped by the errors of a port choice that found RoCE
// ports and no InfiniBand port to use: a permanent condition, that the
// exporter reports once and retries slowly (docs/runbook.md).
var ErrRoCEPort = errors.New("ibtracer needs an InfiniBand port: a RoCE port has no subnet manager, LIDs or SMPs to trace")

// ChoosePort picks the port to use as the OFED tools do (libibumad's
// resolve_ca_name / resolve_ca_port): with ca == "" the first CA that has
// an Active InfiniBand port, else the first CA with a port it could use;
// within a CA the first Active IB port, else the first LinkUp one, else
// the first that is not Disabled; a switch uses port 0. RoCE (Ethernet
// link layer) ports are skipped. An explicit ca or port that cannot be
// used is an error that says why; finding nothing is one error that names
// every port it passed over and why.
func ChoosePort(root, ca string, port int) (Port, error) {
	if ca != "" {
		c, err := ReadCA(root, ca)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return Port{}, missing(fmt.Sprintf("CA %q not found under %s/class/infiniband (see `ibstat -l` for the names)", ca, root))
			}
			return Port{}, err
		}
		p, _, skipped, err := choosePortOf(c, port)
		if err != nil {
			return Port{}, err
		}
		if skipped != nil {
			return Port{}, skipped.err(fmt.Sprintf("CA %s has no usable InfiniBand port", c.Name))
		}
		return p, nil
	}
	cas, err := ListCAs(root)
	if err != nil {
		return Port{}, err
	}
	if len(cas) == 0 {
		return Port{}, missing(fmt.Sprintf("no InfiniBand devices under %s/class/infiniband; load the HCA driver and ib_umad", root))
	}
	var first *Port
	var all skips
	for _, c := range cas {
		p, active, skipped, err := choosePortOf(c, port)
		switch {
		case err != nil:
			all.add(err.Error(), false)
		case skipped != nil:
			all.ports = append(all.ports, skipped.ports...)
			all.roce = all.roce || skipped.roce
		case active:
			return p, nil
		case first == nil:
			first = &p
		}
	}
	if first != nil {
		return *first, nil
	}
	return Port{}, all.err("no usable InfiniBand port")
}

// skips are the ports a choice passed over, each with why.
type skips struct {
	ports []string
	roce  bool
}

func (s *skips) add(why string, roce bool) {
	s.ports = append(s.ports, why)
	s.roce = s.roce || roce
}

// err is the one error of a choice that found nothing: what, the ports
// with why, and ErrRoCEPort when a RoCE port was among them.
func (s *skips) err(what string) error {
	if len(s.ports) == 0 {
		s.ports = []string{"no ports"}
	}
	msg := fmt.Sprintf("%s (%s)", what, strings.Join(s.ports, "; "))
	if s.roce {
		return fmt.Errorf("%s: %w", msg, ErrRoCEPort)
	}
	return errors.New(msg)
}

// choosePortOf picks c's port: the port asked for, or the best one and
// whether it is Active. With nothing to use it returns the skips, or an
// error for a port asked for that cannot be used.
func choosePortOf(c CA, port int) (Port, bool, *skips, error) {
	if c.NodeType == ibmad.NodeTypeSwitch {
		for _, p := range c.Ports {
			if p.Num == 0 && (port <= 0) {
				return p, true, nil, nil
			}
		}
		if port > 0 {
			return Port{}, false, nil, fmt.Errorf("CA %s is a switch: MADs go through its management port 0, not port %d", c.Name, port)
		}
		return Port{}, false, nil, fmt.Errorf("CA %s is a switch without port 0 in sysfs", c.Name)
	}
	if port > 0 {
		for _, p := range c.Ports {
			if int(p.Num) != port {
				continue
			}
			switch {
			case !p.IsIB():
				return Port{}, false, nil, fmt.Errorf("CA %s port %d is RoCE (link layer %s): %w", c.Name, port, p.LinkLayer, ErrRoCEPort)
			case p.PhysState == ibmad.PhysStateDisabled:
				return Port{}, false, nil, fmt.Errorf("CA %s port %d is disabled (phys_state Disabled)", c.Name, port)
			}
			return p, p.State == ibmad.PortStateActive, nil, nil
		}
		return Port{}, false, nil, fmt.Errorf("CA %s has no port %d", c.Name, port)
	}
	var ib []Port
	var sk skips
	for _, p := range c.Ports {
		if p.Num == 0 {
			continue
		}
		if !p.IsIB() {
			sk.add(fmt.Sprintf("%s port %d is RoCE, link layer %s", c.Name, p.Num, p.LinkLayer), true)
			continue
		}
		ib = append(ib, p)
	}
	for _, p := range ib {
		if p.State == ibmad.PortStateActive {
			return p, true, nil, nil
		}
	}
	for _, p := range ib {
		if p.PhysState == ibmad.PhysStateLinkUp {
			return p, false, nil, nil
		}
	}
	for _, p := range ib {
		if p.PhysState != ibmad.PhysStateDisabled {
			return p, false, nil, nil
		}
		sk.add(fmt.Sprintf("%s port %d is disabled", c.Name, p.Num), false)
	}
	if len(sk.ports) == 0 {
		sk.add(fmt.Sprintf("%s has no ports", c.Name), false)
	}
	return Port{}, false, &sk, nil
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
