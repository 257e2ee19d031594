package localize

import (
	"fmt"
	"strconv"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// LabelNames are the label names of a link, in the order Link.Labels
// gives their values: the same as the link-health series (docs/metrics.md,
// "Link health"), so that queries join on them.
var LabelNames = []string{"node_guid", "port", "remote_node_guid", "remote_port"}

// Link is a link by its two ends, the end with the smaller node GUID
// first (then the smaller port, for a link between two ports of one
// node), so that a link crossed up and down a fat tree is one link. Make
// one with NewLink; a Link built by hand must already be in that order.
type Link struct {
	NodeGUID       ibmad.GUID
	Port           uint8
	RemoteNodeGUID ibmad.GUID
	RemotePort     uint8
}

// NewLink is the link between port aPort of node a and port bPort of
// node b, in either direction.
func NewLink(a ibmad.GUID, aPort uint8, b ibmad.GUID, bPort uint8) Link {
	if b < a || (b == a && bPort < aPort) {
		a, aPort, b, bPort = b, bPort, a, aPort
	}
	return Link{NodeGUID: a, Port: aPort, RemoteNodeGUID: b, RemotePort: bPort}
}

// Less orders links by their first end, then their second.
func (l Link) Less(m Link) bool {
	if l.NodeGUID != m.NodeGUID {
		return l.NodeGUID < m.NodeGUID
	}
	if l.Port != m.Port {
		return l.Port < m.Port
	}
	if l.RemoteNodeGUID != m.RemoteNodeGUID {
		return l.RemoteNodeGUID < m.RemoteNodeGUID
	}
	return l.RemotePort < m.RemotePort
}

// Labels are the link's label values, in the order of LabelNames.
func (l Link) Labels() []string {
	return []string{l.NodeGUID.String(), strconv.Itoa(int(l.Port)), l.RemoteNodeGUID.String(), strconv.Itoa(int(l.RemotePort))}
}

// Has says whether port port of node guid is an end of the link.
func (l Link) Has(guid ibmad.GUID, port uint8) bool {
	return (l.NodeGUID == guid && l.Port == port) || (l.RemoteNodeGUID == guid && l.RemotePort == port)
}

func (l Link) String() string {
	return fmt.Sprintf("%s/%d-%s/%d", l.NodeGUID, l.Port, l.RemoteNodeGUID, l.RemotePort)
}
