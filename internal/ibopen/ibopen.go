package ibopen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/alecthomas/kingpin/v2"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/ibmad/umad"
	"github.com/ibtracer/ibtracer_exporter/internal/strictint"
)

// Config is what the flags select.
type Config struct {
	Transport   string
	CA          string
	Port        int
	IbsimNode   string
	SimTopology string
	// SimFatTree builds a two-level fat tree instead of reading a
	// topology: LEAVES,SPINES,HOSTS[,LINKS] (sim.FatTree2).
	SimFatTree string
	SimNode    string
	SimAgents  string
	SimLMC     int
	SimSeed    uint64
	// SimSwitchSMA is what the simulated switches' SMAs answer as
	// LocalPortNum to a LID-routed SMP: real (the arrival port) or ibsim (0).
	SimSwitchSMA string
	// SimRemoteSubnet adds a router and a second subnet behind it
	// (subnet.go).
	SimRemoteSubnet bool
	SimRouterDown   bool // its router forwards nothing (a fault)
	// SimMulticast: groups whose MFTs the simulated fabric programs,
	// MLID:MEMBER,... each (multicast.go).
	SimMulticast []string
	// Sysfs is where umad reads the devices (default /sys; tests point it
	// at a fixture).
	Sysfs string
}

// AddFlags registers the transport flags on app. short adds the OFED
// tools' -C/-P style shortcuts the seed's ibtracer used (-I, -p).
func AddFlags(app *kingpin.Application, c *Config, short bool) {
	ca := app.Flag("ib.ca", "InfiniBand device (CA) to use, as in `ibstat -l`; default: as the OFED tools choose.")
	port := app.Flag("ib.port", "Port of the CA; default: the first Active port (port 0 on a switch).")
	if short {
		ca.Short('I')
		port.Short('p')
	}
	app.Flag("ib.transport", "MAD transport: umad (the kernel, for real hardware), ibsim (the ibsim simulator) or sim (the built-in simulated fabric).").
		Default("umad").EnumVar(&c.Transport, "umad", "ibsim", "sim")
	ca.StringVar(&c.CA)
	strictint.IntVar(port, &c.Port, 0, 254)
	app.Flag("ibsim.node", "ibsim node to attach to (default $SIM_HOST); the socket name comes from $IBSIM_SOCKNAME as for the stock tools.").
		StringVar(&c.IbsimNode)
	AddSimFlags(app, c)
}

// AddSimFlags registers the flags of the simulated fabric (--sim.*).
func AddSimFlags(app *kingpin.Application, c *Config) {
	app.Flag("sim.topology", "Topology file (ibnetdiscover/ibsim format) for --ib.transport=sim; default: a built-in demo fat tree.").
		StringVar(&c.SimTopology)
	app.Flag("sim.fattree", "A two-level fat tree for --ib.transport=sim instead of a topology file: LEAVES,SPINES,HOSTS[,LINKS] "+
		"(hosts per leaf, parallel links per leaf and spine, default 1), such as 128,64,80 for 10,240 hosts; nodes S<n>, L<n>, H<leaf>-<n>.").
		StringVar(&c.SimFatTree)
	app.Flag("sim.node", "Node of the simulated fabric this program runs on; default: the first CA.").StringVar(&c.SimNode)
	app.Flag("sim.agents", "Where the simulated fabric runs the vendor agent: all, hosts, none, a percentage of hosts such as 80% (with every switch), "+
		"or hosts:80% (a percentage of hosts, no switch, as on a real fabric).").
		Default("all").StringVar(&c.SimAgents)
	strictint.IntVar(app.Flag("sim.lmc", "LMC of the simulated fabric's CA ports (0..7).").Default("0"), &c.SimLMC, 0, 7)
	app.Flag("sim.seed", "Seed of the simulated fabric's random choices.").Default("1").Uint64Var(&c.SimSeed)
	app.Flag("sim.switch-sma", "What the simulated switches' SMAs answer as LocalPortNum to a LID-routed SMP: real (the port it arrived on, as real switches) or ibsim (0, as ibsim).").
		Default("real").EnumVar(&c.SimSwitchSMA, "real", "ibsim")
	app.Flag("sim.remote-subnet", "Add a router on the simulated fabric's last switch and a second subnet behind it (GID prefix fec0:0:0:b::/64, hosts R-H0..R-H3); "+
		"the fabric itself gets prefix fec0:0:0:a::/64.").BoolVar(&c.SimRemoteSubnet)
	app.Flag("sim.router-down", "With --sim.remote-subnet: the router forwards nothing to the second subnet (a fault).").BoolVar(&c.SimRouterDown)
	app.Flag("sim.multicast", "A multicast group on the simulated fabric, MLID:MEMBER,MEMBER,... (for example 0xc001:H0-0,H1-2,H3-3): "+
		"its forwarding tables are programmed as an SM does once the member CAs have joined; repeatable.").StringsVar(&c.SimMulticast)
}

// Opened is an open transport, with the simulated fabric when there is one.
type Opened struct {
	Transport ibmad.Transport
	Fabric    *sim.Fabric // --ib.transport=sim only
	Node      string      // the node attached to (sim, ibsim)
	closers   []func()
}

// Close stops the in-process agents of a simulated fabric.
func (o *Opened) Close() {
	for i := len(o.closers) - 1; i >= 0; i-- {
		o.closers[i]()
	}
}

// DemoTopology is the fabric --ib.transport=sim uses without a topology
// file: four leaves, two spines, two parallel links per pair and four hosts
// per leaf.
func DemoTopology() *sim.Topology {
	t, err := sim.FatTree2(4, 2, 4, 2)
	if err != nil {
		panic(err)
	}
	return t
}

// Open opens the selected transport. acceptRequests must be true for a
// program that will host the agent (ibsim delivers requests only then).
func (c *Config) Open(acceptRequests bool) (*Opened, error) {
	switch c.Transport {
	case "", "umad":
		t, err := umad.Open(umad.Options{CA: c.CA, Port: c.Port, Sysfs: c.Sysfs})
		if err != nil {
			return nil, err
		}
		return &Opened{Transport: t}, nil
	case "ibsim":
		o := ibsim.OptionsFromEnv()
		if c.IbsimNode != "" {
			o.Node = c.IbsimNode
		}
		o.AcceptRequests = acceptRequests
		t, err := ibsim.Dial(o)
		if err != nil {
			return nil, err
		}
		return &Opened{Transport: t, Node: t.NodeName()}, nil
	case "sim":
		return c.openSim()
	}
	return nil, fmt.Errorf("unknown transport %q: use umad, ibsim or sim", c.Transport)
}

func (c *Config) openSim() (*Opened, error) {
	o, err := c.OpenFabric()
	if err != nil {
		return nil, err
	}
	t, err := o.Fabric.Attach(o.Node, c.Port)
	if err != nil {
		o.Close()
		return nil, err
	}
	o.Transport = t
	return o, nil
}

// OpenFabric builds the simulated fabric the --sim.* flags select and
// starts the vendor agents --sim.agents asks for, on every selected node
// but the one this program runs on (--sim.node, default the first CA),
// which it returns as Node. Transport stays nil: --ib.transport=sim
// attaches one there, and cmd/ibtracer-fabric serves the fabric to other
// processes instead.
func (c *Config) OpenFabric() (*Opened, error) {
	topo := DemoTopology()
	var err error
	switch {
	case c.SimTopology != "" && c.SimFatTree != "":
		return nil, errors.New("--sim.topology and --sim.fattree: give one")
	case c.SimTopology != "":
		topo, err = sim.LoadTopology(c.SimTopology)
	case c.SimFatTree != "":
		topo, err = fatTree(c.SimFatTree)
	}
	if err != nil {
		return nil, err
	}
	if c.SimLMC < 0 || c.SimLMC > 7 {
		return nil, fmt.Errorf("--sim.lmc %d: want 0..7", c.SimLMC)
	}
	opts := sim.Options{LMC: uint8(c.SimLMC), Seed: c.SimSeed, SwitchLocalPortZero: c.SimSwitchSMA == "ibsim"}
	if c.SimRemoteSubnet {
		if err := withRouter(topo, &opts); err != nil { // subnet.go
			return nil, err
		}
	}
	f, err := sim.New(topo, opts)
	if err != nil {
		return nil, err
	}
	if err := programGroups(f, c.SimMulticast); err != nil { // multicast.go
		return nil, err
	}
	if c.SimRemoteSubnet {
		if err = joinRemote(f, opts, !c.SimRouterDown); err != nil {
			return nil, err
		}
	}
	node := c.SimNode
	if node == "" {
		for _, n := range f.Nodes() {
			if n.Type == ibmad.NodeTypeCA {
				node = n.Name
				break
			}
		}
	} else if f.Node(node) == nil {
		return nil, fmt.Errorf("--sim.node %q: no such node in the simulated fabric", node)
	}
	o := &Opened{Fabric: f, Node: node}
	if err := o.startSimAgents(c.SimAgents, node, c.SimSeed); err != nil {
		o.Close()
		return nil, err
	}
	return o, nil
}

// startSimAgents runs the vendor agent, in this process, on the simulated
// nodes the --sim.agents policy selects (never on our own node: the
// caller decides that).
func (o *Opened) startSimAgents(policy, self string, seed uint64) error {
	frac, hostsOnly, err := parseAgentPolicy(policy)
	if err != nil || frac == 0 && hostsOnly {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 0x1b7))
	for _, n := range o.Fabric.Nodes() {
		if n.Name == self || (hostsOnly && n.IsSwitch()) {
			continue
		}
		if frac < 1 && !n.IsSwitch() && rng.Float64() >= frac {
			continue
		}
		tr, err := o.Fabric.Attach(n.Name, 0)
		if err != nil {
			return err
		}
		e := ibmad.NewEngine(tr, ibmad.Options{})
		if _, err := agent.New(e, agent.Config{Ping: true, Hostname: n.Name}); err != nil {
			e.Close()
			return err
		}
		o.closers = append(o.closers, func() { e.Close() })
	}
	return nil
}

// parseAgentPolicy reads --sim.agents: all (every node), hosts (every
// host, no switch), none, N% (N% of the hosts and every switch), or
// hosts:N% (N% of the hosts and no switch, as on a real fabric, where
// switch firmware cannot run our agent and the switches' SMAs validate
// their hops). It returns the fraction of hosts and whether switches are
// left out; (0, true) runs no agent.
func parseAgentPolicy(policy string) (frac float64, hostsOnly bool, err error) {
	p := strings.TrimSpace(policy)
	switch {
	case p == "all":
		return 1, false, nil
	case p == "hosts":
		return 1, true, nil
	case p == "none" || p == "":
		return 0, true, nil
	case strings.HasSuffix(p, "%"):
		hostsOnly = strings.HasPrefix(p, "hosts:")
		v, perr := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(p, "hosts:"), "%"), 64)
		if perr != nil || v < 0 || v > 100 {
			return 0, false, fmt.Errorf("--sim.agents %q: want all, hosts, none, a percentage 0%%..100%% or hosts:0%%..100%%", policy)
		}
		return v / 100, hostsOnly, nil
	}
	return 0, false, fmt.Errorf("--sim.agents %q: want all, hosts, none, a percentage such as 80%% or hosts:80%%", policy)
}

// fatTree is --sim.fattree's LEAVES,SPINES,HOSTS[,LINKS] as a topology.
func fatTree(spec string) (*sim.Topology, error) {
	parts := strings.Split(spec, ",")
	if len(parts) != 3 && len(parts) != 4 {
		return nil, fmt.Errorf("--sim.fattree %q: want LEAVES,SPINES,HOSTS[,LINKS]", spec)
	}
	n := []int{0, 0, 0, 1}
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("--sim.fattree %q: %q is not a count of at least 1", spec, p)
		}
		n[i] = v
	}
	t, err := sim.FatTree2(n[0], n[1], n[2], n[3])
	if err != nil {
		return nil, fmt.Errorf("--sim.fattree %q: %w", spec, err)
	}
	return t, nil
}
