package trace

import (
	"fmt"
	"io"
	"time"
)

// JSONBeyond is the part of a path past the router where it left the
// subnet, in the JSON report (status left_subnet; docs/protocol.md).
type JSONBeyond struct {
	DGID             string `json:"dgid"`
	SubnetPrefix     string `json:"subnet_prefix"`
	RouterGUID       string `json:"router_guid"`
	RouterInPort     uint8  `json:"router_in_port"`
	RouterLID        uint16 `json:"router_lid"` // the router port's LID here (the local SA's DLID)
	SL               uint8  `json:"sl"`
	HopLimit         uint8  `json:"hop_limit"`
	RemoteSA         bool   `json:"remote_sa_answered"`
	RemoteRouterGUID string `json:"remote_router_guid,omitempty"`
	RemoteRouterPort uint8  `json:"remote_router_port,omitempty"` // the router's port in the remote subnet
	RemoteRouterLID  uint16 `json:"remote_router_lid,omitempty"`  // its LID there
	RemoteDLID       uint16 `json:"remote_dlid,omitempty"`        // the destination's LID in the remote subnet
	RemoteSL         uint8  `json:"remote_sl,omitempty"`
	NodeGUID         string `json:"node_guid,omitempty"`
	NodeType         string `json:"node_type,omitempty"`
	NodeDesc         string `json:"node_desc,omitempty"`
	Note             string `json:"note,omitempty"`
}

// json is b's report form (nil for none).
func (b *Beyond) json() *JSONBeyond {
	if b == nil {
		return nil
	}
	j := &JSONBeyond{DGID: b.DGID.String(), SubnetPrefix: prefixString(b.DGID.Prefix()), RouterGUID: b.Router.String(),
		RouterInPort: b.RouterInPort, RouterLID: b.Local.DLID, SL: b.Local.SL, HopLimit: b.Local.HopLimit, Note: b.Note}
	if p2 := b.Remote; p2 != nil {
		j.RemoteSA, j.RemoteRouterLID, j.RemoteDLID, j.RemoteSL = true, p2.DLID, p2.SLID, p2.SL
	}
	if b.RemoteRouter != 0 {
		j.RemoteRouterGUID, j.RemoteRouterPort = b.RemoteRouter.String(), b.RemoteRouterPort
	}
	if b.NodeGUID != 0 {
		j.NodeGUID, j.NodeType, j.NodeDesc = b.NodeGUID.String(), b.NodeType.String(), b.NodeDesc
	}
	return j
}

// leftSummary is the one-line text form of a trace that left the subnet.
func (r *Result) leftSummary(dest string) string {
	b := r.Beyond
	last := &r.Hops[len(r.Hops)-1]
	s := fmt.Sprintf("%s: left the subnet at %s port %d after %d hops (%s)", dest, name(last), last.InPort, r.PathHops(), r.Verdicts())
	if p2 := b.Remote; p2 != nil {
		s += fmt.Sprintf("; subnet %s: lid %d", prefixString(b.DGID.Prefix()), p2.SLID)
		if b.NodeDesc != "" {
			s += fmt.Sprintf(" %q", b.NodeDesc)
		}
	}
	return s + fmt.Sprintf(", %d MADs in %s", r.MADs, r.Duration.Round(time.Microsecond))
}

// writeBeyond writes, after the hops of -v, where the path left the
// subnet and what the remote SA showed of the rest.
func (r *Result) writeBeyond(w io.Writer) {
	b := r.Beyond
	if b == nil || len(r.Hops) == 0 {
		return
	}
	fmt.Fprintf(w, "Leaves the subnet at router {%s} port %d lid %d (GRH: hop limit %d, SL %d)\n",
		b.Router, b.RouterInPort, b.Local.DLID, b.Local.HopLimit, b.Local.SL)
	if p2 := b.Remote; p2 != nil {
		port := "?"
		if b.RemoteRouter != 0 {
			port = fmt.Sprint(b.RemoteRouterPort)
		}
		fmt.Fprintf(w, "Subnet %s (its SA, through the router): router port [%s] lid %d ... -> %s {%s} lid %d %q\n",
			prefixString(b.DGID.Prefix()), port, p2.DLID, orUnknown(b.NodeType.String(), b.NodeGUID != 0), b.DGID, p2.SLID, b.NodeDesc)
		fmt.Fprintf(w, "(the remote subnet's hops are not walked: SMPs do not cross a router)\n")
	}
	if b.Note != "" && r.Status == StatusLeftSubnet {
		fmt.Fprintln(w, "Note: "+b.Note)
	}
}

func orUnknown(s string, known bool) string {
	if known {
		return s
	}
	return "port"
}
