// Package sim is an in-process simulated InfiniBand fabric for tests,
// benchmarks and the zero-setup demo (docs/architecture.md).
//
// It reads ibnetdiscover/ibsim topology files (or builds fat trees),
// assigns LIDs, computes min-hop routes that spread destinations over
// parallel links as OpenSM's minhop does, and answers the MADs the tracer
// sends the way real nodes do: directed-route and LID-routed SMPs at every
// node's SMA, SA PathRecord/NodeRecord at the SM node, PerfMgt at every
// port. LID-routed MADs of other classes travel hop by hop through the
// forwarding tables to a Transport attached at the destination node, which
// learns the true ingress port. Faults can be injected: per-port drop rates,
// links going down (optionally followed by a re-route, as an SM sweep
// would), switches whose data plane disagrees with their LFT, LID changes
// and nodes or agents that disappear.
//
// What each file holds:
//
// The fabric and its topology:
//   - topology.go: Topology, NodeSpec and LinkEnd (AddNode, Connect), and
//     the ibnetdiscover/ibsim file parser (LoadTopology, ParseTopology,
//     ParseError naming file and line).
//   - fattree.go: FatTree2 and FatTree3, generated fat trees.
//   - fabric.go: Options, Fabric (New), Node and Port, LID assignment and
//     the look-ups by name, GUID and LID (Node, NodeByGUID, PortByLID,
//     LIDOf, CALIDs, SMLID), the MAD count.
//   - route.go: min-hop routes spread over parallel links, Reroute, LFT.
//   - router.go: Router and JoinSubnets, two subnets joined by a router
//     node (NodeType 3), and the SA's PathRecord to the other subnet's
//     GIDs; no independent peer checks it (ibsim has no routers).
//   - router_forward.go: the router passing GMPs with a GRH to the other
//     subnet's SA and the answers back.
//   - subnets.go: AttachRouter, RemoteSubnet, JoinRemoteSubnet and
//     TwoSubnets, the two-subnet fabrics of the tests and the demo.
//
// Moving MADs:
//   - transport.go: Transport (Attach), the ibmad.Transport of one port:
//     its registrations, queue (QueueDepth, Overflows), Send and Recv.
//   - local.go: what a transport knows of its own port (NodeInfo, PortInfo,
//     PortNum, LID) and AcceptAll, for the socket server.
//   - forward.go: directed-route delivery, LID-routed delivery hop by hop
//     through the forwarding tables, and drops on the links crossed.
//
// The agents that answer:
//   - sma.go: the SMA: NodeInfo, NodeDescription, PortInfo, SwitchInfo and
//     LinearForwardingTable answers.
//   - mcast.go: multicast groups (SetMulticastGroup: a tree over the
//     switches to the member CAs, as an SM programs it) and the
//     MulticastForwardingTable answers.
//   - sma_localport.go: the LocalPortNum a switch's SMA gives LID-routed
//     SMPs (SetSwitchLocalPortZero).
//   - sa.go: the SA at the SM node: ClassPortInfo, NodeRecord and
//     PathRecord answers, in OpenSM's port order.
//   - sa_records.go: the SA tables: SwitchInfoRecord, LFTRecord,
//     LinkRecord and PortInfoRecord.
//   - sa_rmpp.go: SA tables sent over RMPP, one session per request.
//   - sa_refusal.go: SetSARefusal, an SA that refuses what OpenSM or a
//     weaker SA would (LinkRecord LIDs masked with the LMC, no tables).
//   - pathqos.go: the SL and GRH: PathRecord SL, hop limit, traffic class
//     and flow label per destination (SetPathQoS), SLs the switches drop
//     (SetSLUnusable), GRHs carried to the receiver and dropped when their
//     DGID is not the receiver's GID.
//   - pma.go: the PMA: ClassPortInfo, PortCounters, their extended
//     form and PortVLXmitWaitCounters (Get, and Set to clear), saturated
//     as real ports do.
//
// Faults:
//   - faults.go: drop rates, links down (with or without a re-route),
//     data planes that disagree with the LFT, LID changes, silent nodes,
//     mute agents (SetAgentsMute).
//   - smpfirewall.go: SMPs refused for every node but the SM
//     (SetSMPFirewall, SetSMPMKeyProtect).
//   - health_faults.go: link training (width, speed), climbing error
//     counters, PMA status and legacy PMA faults.
//   - pma_misanswer.go: SetPMAMisanswer, a PMA that answers for another
//     attribute or another port than it was asked.
//   - congestion.go: congested ports, whose PortXmitWait and one VL's
//     PortVLXmitWait climb (SetXmitWaitRate, SetVLXmitWaitRate), and PMAs
//     without PortVLXmitWaitCounters.
//   - chaos.go: Chaos and ChaosOptions, random faults and their repairs on
//     one schedule, for the demo.
//   - health_chaos.go: the standing path-health faults Chaos adds.
package sim
