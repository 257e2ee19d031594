package madtest

import (
	"context"
	"fmt"
	"sort"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Node is a node found by the walk.
type Node struct {
	Path ibmad.DRPath // directed route from the local port
	Info ibmad.NodeInfo
	Desc string
}

// Link is a cable between two ports, A before B in description order.
type Link struct {
	A, B  *Node
	APort uint8
	BPort uint8
}

func (l Link) String() string {
	return fmt.Sprintf("%s[%d] - %s[%d]", l.A.Desc, l.APort, l.B.Desc, l.BPort)
}

// Subnet is the result of a walk.
type Subnet struct {
	Nodes []*Node // in discovery (BFS) order; Nodes[0] is the local node
	Links []Link
}

// Get sends one directed-route SMP Get along path and returns the
// response, or an error for a transport failure or a non-zero status.
func Get(ctx context.Context, e *ibmad.Engine, path ibmad.DRPath, attr ibmad.AttrID, mod uint32) (*ibmad.MAD, error) {
	var smp ibmad.SMP
	if err := smp.InitDRGet(attr, mod, path); err != nil {
		return nil, err
	}
	req := &ibmad.Request{Addr: ibmad.DRAddress()}
	if err := smp.MarshalTo(req.MAD[:]); err != nil {
		return nil, err
	}
	var resp ibmad.Response
	if err := e.Do(ctx, req, &resp); err != nil {
		return nil, err
	}
	if st := ibmad.SMPStatus(&resp.MAD); st != 0 {
		return nil, fmt.Errorf("DR path %s %s: %w", path, ibmad.AttrName(ibmad.ClassSubnDR, attr), st.Err())
	}
	return &resp.MAD, nil
}

func probe(ctx context.Context, e *ibmad.Engine, path ibmad.DRPath) (*Node, error) {
	m, err := Get(ctx, e, path, ibmad.AttrNodeInfo, 0)
	if err != nil {
		return nil, err
	}
	n := &Node{Path: path}
	if err := n.Info.UnmarshalBinary(m.SMPData()); err != nil {
		return nil, err
	}
	if m, err = Get(ctx, e, path, ibmad.AttrNodeDescription, 0); err != nil {
		return nil, err
	}
	var d ibmad.NodeDescription
	_ = d.UnmarshalBinary(m.SMPData())
	n.Desc = d.String()
	return n, nil
}

// Walk discovers the subnet reachable from the engine's port with
// directed-route SMPs only, as ibnetdiscover does: NodeInfo and
// NodeDescription of every node, PortInfo of every switch port, and the
// links between them. Tests use it to compare what a fabric (the sim,
// ibsim) answers with its topology file. Remote CAs
// are leaves (they forward no SMP); the local CA reaches out only through
// the port it is attached to.
func Walk(ctx context.Context, e *ibmad.Engine) (*Subnet, error) {
	root, err := probe(ctx, e, ibmad.DRPath{})
	if err != nil {
		return nil, err
	}
	s := &Subnet{Nodes: []*Node{root}}
	seen := map[ibmad.GUID]bool{root.Info.NodeGUID: true}
	type key struct {
		g ibmad.GUID
		p uint8
	}
	linked := map[key]bool{}
	for i := 0; i < len(s.Nodes); i++ {
		n := s.Nodes[i]
		isSwitch := n.Info.NodeType == ibmad.NodeTypeSwitch
		if !isSwitch && len(n.Path) > 0 {
			continue
		}
		for p := 1; p <= int(n.Info.NumPorts); p++ {
			if !isSwitch && p != int(n.Info.LocalPortNum) {
				continue
			}
			m, err := Get(ctx, e, n.Path, ibmad.AttrPortInfo, uint32(p))
			if err != nil {
				return nil, err
			}
			var pi ibmad.PortInfo
			_ = pi.UnmarshalBinary(m.SMPData())
			if pi.PortPhysState != ibmad.PhysStateLinkUp {
				continue
			}
			peer, err := probe(ctx, e, n.Path.Extend(uint8(p)))
			if err != nil {
				return nil, err
			}
			inPort := peer.Info.LocalPortNum // the port this path enters the peer by
			if !seen[peer.Info.NodeGUID] {
				seen[peer.Info.NodeGUID] = true
				s.Nodes = append(s.Nodes, peer)
			} else {
				for _, o := range s.Nodes {
					if o.Info.NodeGUID == peer.Info.NodeGUID {
						peer = o // keep the first (shortest) path
						break
					}
				}
			}
			a, b := key{n.Info.NodeGUID, uint8(p)}, key{peer.Info.NodeGUID, inPort}
			if linked[a] || linked[b] {
				continue
			}
			linked[a], linked[b] = true, true
			l := Link{A: n, APort: uint8(p), B: peer, BPort: inPort}
			if l.B.Desc < l.A.Desc || (l.B.Desc == l.A.Desc && l.BPort < l.APort) {
				l.A, l.B, l.APort, l.BPort = l.B, l.A, l.BPort, l.APort
			}
			s.Links = append(s.Links, l)
		}
	}
	sort.Slice(s.Links, func(i, j int) bool { return s.Links[i].String() < s.Links[j].String() })
	return s, nil
}

// PortLID is the LID of one port found by a walk.
type PortLID struct {
	Node *Node
	Port uint8
	LID  uint16
}

// WalkPortLIDs walks the subnet from e (Walk) and reads the LID of every
// Active port of it (PortLIDs).
func WalkPortLIDs(ctx context.Context, e *ibmad.Engine) ([]PortLID, error) {
	s, err := Walk(ctx, e)
	if err != nil {
		return nil, err
	}
	return PortLIDs(ctx, e, s)
}

// PortLIDs reads, with PortInfo, the LID of every Active port that has one:
// port 0 of each switch and every port of each CA (a multi-port CA has a
// LID per port).
func PortLIDs(ctx context.Context, e *ibmad.Engine, s *Subnet) ([]PortLID, error) {
	var out []PortLID
	for _, n := range s.Nodes {
		ports := []uint8{0}
		if n.Info.NodeType != ibmad.NodeTypeSwitch {
			ports = ports[:0]
			for p := uint8(1); p <= n.Info.NumPorts; p++ {
				ports = append(ports, p)
			}
		}
		for _, p := range ports {
			m, err := Get(ctx, e, n.Path, ibmad.AttrPortInfo, uint32(p))
			if err != nil {
				return nil, err
			}
			var pi ibmad.PortInfo
			_ = pi.UnmarshalBinary(m.SMPData())
			if pi.LID != 0 && pi.PortState == ibmad.PortStateActive {
				out = append(out, PortLID{Node: n, Port: p, LID: pi.LID})
			}
		}
	}
	return out, nil
}
