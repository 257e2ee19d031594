package config

import (
	"fmt"
	"strings"
)

// checkMLID checks a multicast destination (mlid:): the multicast path
// from this node to the member whose LID is lid:, traced over the MFTs as
// ibtracert -m does (docs/architecture.md, "Multicast traces"). The member
// is given by LID only: a multicast trace resolves nothing. paths: all
// has no meaning for it. The MLID's range is checked with the other
// integers (numbers.go).
func (d *Destination) checkMLID(i int, bad badFunc) error {
	if d.MLID == 0 {
		return nil
	}
	if d.LID == 0 {
		return bad(d.keyLine("mlid"), d.field(i, "mlid"), "0x%04x: a multicast destination names its member by lid: (the path from this node to that LID over the group's MFTs); gid, guid and node are not resolved for it", d.MLID)
	}
	if strings.EqualFold(d.Paths, PathsAll) {
		return bad(d.keyLine("paths"), d.field(i, "paths"), "all: a multicast destination (mlid:) has one path")
	}
	return nil
}

// Multicast says whether the destination is a multicast path (mlid:).
func (d Destination) Multicast() bool { return d.MLID != 0 }

// MulticastAddress is a multicast destination's address and ibtracer
// arguments, as the info series shows them: mlid 0xc001 lid 12, and
// -m 0xc001 12.
func (d Destination) MulticastAddress() (address, args string) {
	return fmt.Sprintf("mlid 0x%04x lid %d", d.MLID, d.LID), fmt.Sprintf("-m 0x%04x %d", d.MLID, d.LID)
}
