package fleet

import (
	"context"
	"errors"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sa"
)

// saInventory asks the SA for its NodeRecords: one per switch and one
// per CA port with a LID, which carry the port's LID, GUIDs, number and
// the node's description (docs/architecture.md, "Discovered
// destinations").
type saInventory struct{ e *ibmad.Engine }

// SAInventory is the SA inventory of engine (nil: no device open).
func SAInventory(engine *ibmad.Engine) Inventory {
	if engine == nil {
		return nil
	}
	return saInventory{engine}
}

// Top reads the local leaf switch's LinearFDBTop (the local node's own
// when it is a switch) with one directed-route SwitchInfo Get: the
// highest LID a sampled selector draws from (lidsample.go).
func (s saInventory) Top(ctx context.Context) (uint16, error) {
	p, err := s.e.Port()
	if err != nil {
		return 0, err
	}
	path := ibmad.DRPath{}
	if p.NodeType != ibmad.NodeTypeSwitch {
		path = ibmad.DRPath{p.PortNum}
	}
	smp, err := ibmad.NewDRGet(ibmad.AttrSwitchInfo, 0, path)
	if err != nil {
		return 0, err
	}
	req := &ibmad.Request{Addr: ibmad.DRAddress()}
	_ = smp.MarshalTo(req.MAD[:])
	var resp ibmad.Response
	if err := s.e.Do(ctx, req, &resp); err != nil {
		return 0, fmt.Errorf("SwitchInfo of the local leaf switch: %w", err)
	}
	var si ibmad.SwitchInfo
	if st := ibmad.SMPStatus(&resp.MAD); st != 0 {
		return 0, fmt.Errorf("SwitchInfo of the local leaf switch: status %#04x", uint16(st))
	}
	if err := si.UnmarshalBinary(resp.MAD.SMPData()); err != nil {
		return 0, fmt.Errorf("SwitchInfo of the local leaf switch: %w", err)
	}
	if si.LinearFDBTop == 0 {
		return 0, errors.New("the local leaf switch forwards no LID (LinearFDBTop 0: has a subnet manager programmed it?)")
	}
	return si.LinearFDBTop, nil
}

// PortAt asks the port at lid itself, by LID-routed SMPs: its NodeInfo
// (type, GUIDs, port number), for a CA port its PortInfo (whether lid is
// its base LID) and its node's NodeDescription. OpenSM answers a
// NodeRecord Get by LID by walking every node (3.3 ms of its CPU each at
// 10,000 nodes, docs/architecture.md, "Load on the subnet manager"),
// while an SMP to a LID is forwarded by the switches on VL15 and answered
// by the port's own SMA. An SMP that gets no answer proves nothing: no
// port has the LID, or the way to it is broken (a dead or lossy link), or
// the port does not answer SMPs from here (M_Key, an SMP firewall). Then
// the SA is asked for the LID's NodeRecord, so that a port behind a
// broken link is still sampled, and its trace says what is broken.
func (s saInventory) PortAt(ctx context.Context, lid uint16) (InventoryPort, bool, error) {
	p, ok, err := s.portBySMP(ctx, lid)
	if errors.Is(err, ibmad.ErrTimeout) {
		return s.portBySA(ctx, lid)
	}
	return p, ok, err
}

// portBySMP is PortAt by LID-routed SMPs only.
func (s saInventory) portBySMP(ctx context.Context, lid uint16) (InventoryPort, bool, error) {
	var ni ibmad.NodeInfo
	if err := s.lidGet(ctx, lid, ibmad.AttrNodeInfo, 0, &ni); err != nil {
		return InventoryPort{}, false, err
	}
	ip := InventoryPort{NodeGUID: uint64(ni.NodeGUID), PortGUID: uint64(ni.PortGUID), LID: lid, Port: ni.LocalPortNum, NodeType: ni.NodeType}
	if ni.NodeType == ibmad.NodeTypeSwitch {
		ip.Port = 0
		return ip, true, nil
	}
	var pi ibmad.PortInfo
	if err := s.lidGet(ctx, lid, ibmad.AttrPortInfo, uint32(ni.LocalPortNum), &pi); err != nil {
		return InventoryPort{}, false, err
	}
	if ip.LID = pi.LID; ip.LID != lid {
		return ip, true, nil // another of the port's LMC LIDs: not a destination, no name needed
	}
	var nd ibmad.NodeDescription
	if err := s.lidGet(ctx, lid, ibmad.AttrNodeDescription, 0, &nd); err != nil {
		return InventoryPort{}, false, err
	}
	ip.NodeDesc = nd.String()
	return ip, true, nil
}

// portBySA is PortAt by the LID's NodeRecord: ok false when the SA has
// none (no port has the LID).
func (s saInventory) portBySA(ctx context.Context, lid uint16) (InventoryPort, bool, error) {
	p, err := s.e.Port()
	if err != nil {
		return InventoryPort{}, false, err
	}
	if p.SMLID == 0 {
		return InventoryPort{}, false, errors.New("SA: the local port knows no SM (SMLID 0)")
	}
	r, err := sa.NodeRecordOf(ctx, s.e, sa.Address(p), lid)
	if sa.IsNoRecords(err) {
		return InventoryPort{}, false, nil
	}
	if err != nil {
		return InventoryPort{}, false, err
	}
	return portOf(&r), true, nil
}

// portOf is the port a NodeRecord names (a switch: its port 0).
func portOf(r *ibmad.NodeRecord) InventoryPort {
	ni := r.NodeInfo
	ip := InventoryPort{NodeGUID: uint64(ni.NodeGUID), PortGUID: uint64(ni.PortGUID), LID: r.LID, Port: ni.LocalPortNum,
		NodeType: ni.NodeType, NodeDesc: r.NodeDescription.String()}
	if ni.NodeType == ibmad.NodeTypeSwitch {
		ip.Port = 0
	}
	return ip
}

// lidGet sends a LID-routed SubnGet(attr, mod) to lid and decodes the
// answer into v.
func (s saInventory) lidGet(ctx context.Context, lid uint16, attr ibmad.AttrID, mod uint32, v interface{ UnmarshalBinary([]byte) error }) error {
	req := &ibmad.Request{Addr: ibmad.SMPAddress(lid)}
	_ = ibmad.NewLIDGet(attr, mod).MarshalTo(req.MAD[:])
	var resp ibmad.Response
	if err := s.e.Do(ctx, req, &resp); err != nil {
		return fmt.Errorf("attribute %#04x of LID %d: %w", uint16(attr), lid, err)
	}
	if st := ibmad.SMPStatus(&resp.MAD); st != 0 {
		return fmt.Errorf("attribute %#04x of LID %d: status %#04x", uint16(attr), lid, uint16(st))
	}
	if err := v.UnmarshalBinary(resp.MAD.SMPData()); err != nil {
		return fmt.Errorf("attribute %#04x of LID %d: %w", uint16(attr), lid, err)
	}
	return nil
}

// scanGap is how many LIDs without a record end a scan by LID.
const scanGap = 64

func (s saInventory) Ports(ctx context.Context) ([]InventoryPort, error) {
	p, err := s.e.Port()
	if err != nil {
		return nil, err
	}
	if p.SMLID == 0 {
		return nil, errors.New("SA: the local port knows no SM (SMLID 0)")
	}
	addr := sa.Address(p)
	recs, err := sa.NodeRecords(ctx, s.e, addr)
	cut := errors.Is(err, ibmad.ErrTableTruncated)
	if cut {
		// The table came back cut to its first MAD (ibsim, see
		// docs/protocol.md "RMPP"): ask one LID at a time instead.
		recs, err = nodeRecordsByLID(ctx, s.e, addr)
	}
	if err != nil {
		return nil, fmt.Errorf("SA NodeRecord table: %w", err)
	}
	seen := map[[2]uint64]bool{}
	out := make([]InventoryPort, 0, len(recs))
	for _, r := range recs {
		ip := portOf(&r)
		k := [2]uint64{ip.PortGUID, uint64(ip.Port)}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, ip)
	}
	if cut {
		return out, ErrTableCutShort
	}
	return out, nil
}

// ErrTableCutShort is what Ports returns, with the whole list, when the
// SA's NodeRecord table came back cut short and the ports were listed
// one LID at a time instead: a Get per LID, never silently (the loop
// counts it in ibtracer_discover_tables_cut_short_total and logs it).
var ErrTableCutShort = errors.New("the SA's NodeRecord table came back cut short: listed one LID at a time")

// nodeRecordsByLID asks for the NodeRecord of each unicast LID from 1 on,
// until scanGap LIDs in a row have none.
func nodeRecordsByLID(ctx context.Context, e *ibmad.Engine, addr ibmad.Address) ([]ibmad.NodeRecord, error) {
	var out []ibmad.NodeRecord
	misses := 0
	for lid := uint16(1); lid < 0xC000 && misses < scanGap; lid++ {
		r, err := sa.NodeRecordOf(ctx, e, addr, lid)
		if sa.IsNoRecords(err) {
			misses++
			continue
		}
		if err != nil {
			return nil, err
		}
		misses = 0
		out = append(out, r)
	}
	return out, nil
}
