package plan

import (
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

// half is one port line of a plan: near's port cabled to far's, as
// the block of near's node states it. nearID and farID are the nodes'
// ids in the file (ibnetdiscover's quoted id, ibdm's system name).
type half struct {
	nearID, farID string
	near, far     End
	width         int
	speed         linkhealth.Speed
	line          int
}

type idPort struct {
	id   string
	port uint8
}

// assemble joins the halves into links: a link is stated once per end;
// its two statements must agree, and a port is cabled once.
func assemble(p *Plan, halves []half) error {
	seen := map[idPort]int{}   // a port's own half, by index
	farOf := map[idPort]int{}  // the half that names a port as its far end
	linkOf := map[idPort]int{} // a port's link, by index
	for i, h := range halves {
		k, rk := idPort{h.nearID, h.near.Port}, idPort{h.farID, h.far.Port}
		if err := check(p, halves, seen, farOf, i); err != nil {
			return err
		}
		seen[k], farOf[rk] = i, i
		if li, ok := linkOf[rk]; ok { // the far end stated this link first
			l := &p.Links[li]
			if l.Width == 0 {
				l.Width = h.width
			}
			if l.Speed == linkhealth.SpeedUnknown {
				l.Speed = h.speed
			}
			linkOf[k] = li
			continue
		}
		linkOf[k], linkOf[rk] = len(p.Links), len(p.Links)
		p.Links = append(p.Links, Link{A: h.near, B: h.far, Width: h.width, Speed: h.speed, Line: h.line})
	}
	return nil
}

// check refuses halves[i] when its port was cabled before, when it is
// cabled to itself, or when it disagrees with what an earlier line says
// of its port or of its far end's.
func check(p *Plan, halves []half, seen, farOf map[idPort]int, i int) error {
	h := halves[i]
	k, rk := idPort{h.nearID, h.near.Port}, idPort{h.farID, h.far.Port}
	bad := func(format string, a ...any) error {
		return &ParseError{File: p.File, Line: h.line, Msg: fmt.Sprintf(format, a...)}
	}
	if j, dup := seen[k]; dup {
		return bad("port %d of %q is cabled again (first at line %d)", h.near.Port, h.nearID, halves[j].line)
	}
	if k == rk {
		return bad("port %d of %q is cabled to itself", h.near.Port, h.nearID)
	}
	if j, ok := seen[rk]; ok && (halves[j].farID != h.nearID || halves[j].far.Port != h.near.Port) {
		o := halves[j]
		return bad("%q[%d] is cabled to %q[%d] here, but line %d cables %q[%d] to %q[%d]",
			h.nearID, h.near.Port, h.farID, h.far.Port, o.line, o.nearID, o.near.Port, o.farID, o.far.Port)
	}
	if j, ok := farOf[k]; ok && (halves[j].nearID != h.farID || halves[j].near.Port != h.far.Port) {
		o := halves[j]
		return bad("%q[%d] is cabled to %q[%d] here, but line %d cables %q[%d] to it",
			h.nearID, h.near.Port, h.farID, h.far.Port, o.line, o.nearID, o.near.Port)
	}
	if j, ok := farOf[rk]; ok {
		if o := halves[j]; o.nearID != h.farID || o.near.Port != h.far.Port {
			return bad("%q[%d] is the far end of two cables (line %d and here)", h.farID, h.far.Port, o.line)
		}
	}
	return nil
}
