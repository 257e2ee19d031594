// Package sim is an in-process simulated InfiniBand fabric for tests,
// benchmarks and the zero-setup demo (docs/architecture.md).
//
// Build a Topology (ParseTopology or LoadTopology read the
// ibnetdiscover/ibsim format; FatTree2 generates a fat tree; AddNode and
// Connect build one by hand), then a Fabric from it with New: LIDs are
// assigned and min-hop routes computed as OpenSM's minhop engine does,
// spreading destinations over parallel links.
//
//	topo, err := sim.ParseTopology("fabric", strings.NewReader(text))
//	f, err := sim.New(topo, sim.Options{LMC: 1})
//
// Attach opens a Transport (an ibmad.Transport) at a node's port; hand it
// to ibmad.NewEngine and send MADs as a tool on that node would:
//
//	tr, err := f.Attach("h1", 0)
//	e := ibmad.NewEngine(tr, ibmad.Options{})
//
// The fabric answers what real nodes answer: directed-route and
// LID-routed SMPs at every node's SMA (NodeInfo, PortInfo, SwitchInfo,
// the forwarding tables), SA queries at the SM node (PathRecord,
// NodeRecord and the record tables, over RMPP), and PerfMgt at every
// port, with counters that move as MADs cross links. A LID-routed MAD of
// any other class travels hop by hop through the switches' data planes
// to a Transport registered for it at the destination, which learns the
// port it arrived on. Several Transports may be attached at once, one
// for each agent of the fabric. JoinSubnets and JoinRemoteSubnet join
// two fabrics through a router; SetMulticastGroup programs a multicast
// group's forwarding tables.
//
// Faults are methods of the Fabric, each undone by its own call:
// per-port drop rates (SetDropRate), links going down with or without a
// re-route (SetLinkState), data planes that disagree with the LFT
// (SetForwardOverride), LID changes, silent nodes and mute agents, links
// trained below their capability, climbing error and transmit-wait
// counters, PMAs and SAs that answer less or wrongly, SMP firewalls.
// Chaos puts such faults in and repairs them on a schedule, for the demo.
//
// The simulator is checked against ibsim and OpenSM by the oracle tests
// of package ibmad/ibsim; package simserve serves a Fabric over ibsim's
// socket protocol to other processes.
package sim
