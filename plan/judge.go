package plan

import (
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

// Statuses of a found link (docs/metrics.md, "The fabric as planned");
// metric label values and JSON strings.
const (
	Planned   = "planned"
	Miswired  = "miswired"
	NotInPlan = "not_in_plan"
	BelowPlan = "below_plan"
)

// Statuses lists every status, worst first.
var Statuses = []string{Miswired, BelowPlan, NotInPlan, Planned}

// FoundEnd is one end of a link as a trace found it: the node's GUID,
// its description, its node-name-map name ("" without one), the port.
type FoundEnd struct {
	GUID ibmad.GUID
	Desc string
	Name string
	Port uint8
	// Type is the node's type, for WriteIBNetDiscover's headers.
	Type ibmad.NodeType
}

// Label is the end's node by name: its node-name-map name, else its
// description, else its GUID.
func (e FoundEnd) Label() string {
	switch {
	case e.Name != "":
		return e.Name
	case e.Desc != "":
		return e.Desc
	}
	return e.GUID.String()
}

// String is the end as ibnetdiscover writes a port: "NAME"[PORT].
func (e FoundEnd) String() string { return fmt.Sprintf("%q[%d]", e.Label(), e.Port) }

// Found is a link a trace crossed: its ends, its active width (lanes, 0:
// unknown) and lane speed.
type Found struct {
	A, B  FoundEnd
	Width int
	Speed linkhealth.Speed
}

// Judgement is a found link judged against the plan.
type Judgement struct {
	Found  Found
	Status string
	// Plan is the planned link at A's port (or, when A's port is not
	// cabled in the plan, at B's); nil for not_in_plan.
	Plan *Link
	// WantA is where A's port should go by the plan, when that is not B
	// (miswired); WantB likewise for B's port. Nil when the plan cables
	// nothing at that port.
	WantA, WantB *End
	// Why says, for a person, what differs.
	Why string
}

// Judge classifies f against the plan (the package doc).
func (p *Plan) Judge(f Found) Judgement {
	j := Judgement{Found: f, Status: NotInPlan}
	ra, okA := p.lookup(f.A)
	rb, okB := p.lookup(f.B)
	if !okA && !okB {
		j.Why = fmt.Sprintf("neither %s nor %s is a cabled port of the plan", f.A, f.B)
		return j
	}
	if okA {
		_, far, l := p.end(ra)
		j.Plan = l
		if p.matches(far, f.B) {
			return p.judgeRate(j, l)
		}
		j.WantA = &far
	}
	if okB {
		_, far, l := p.end(rb)
		if j.Plan == nil {
			j.Plan = l
		}
		if !p.matches(far, f.A) {
			j.WantB = &far
		}
	}
	j.Status = Miswired
	j.Why = miswiredWhy(f, j.WantA, j.WantB)
	return j
}

func miswiredWhy(f Found, wantA, wantB *End) string {
	s := ""
	if wantA != nil {
		s = fmt.Sprintf("%s should go to %s", f.A, wantA)
	} else {
		s = fmt.Sprintf("%s is not cabled in the plan", f.A)
	}
	if wantB != nil {
		return s + fmt.Sprintf("; %s should go to %s", f.B, wantB)
	}
	return s + fmt.Sprintf("; %s is not cabled in the plan", f.B)
}

// judgeRate: cabled as planned; below_plan when narrower or slower than
// the plan states (an unknown found width or speed is not judged).
func (p *Plan) judgeRate(j Judgement, l *Link) Judgement {
	j.Status = Planned
	var why []string
	if l.Width != 0 && j.Found.Width != 0 && j.Found.Width < l.Width {
		why = append(why, fmt.Sprintf("%dX where the plan says %dX", j.Found.Width, l.Width))
	}
	if l.Speed != linkhealth.SpeedUnknown && j.Found.Speed != linkhealth.SpeedUnknown && j.Found.Speed < l.Speed {
		why = append(why, fmt.Sprintf("%s where the plan says %s", j.Found.Speed, l.Speed))
	}
	if len(why) > 0 {
		j.Status = BelowPlan
		j.Why = why[0]
		if len(why) > 1 {
			j.Why += ", " + why[1]
		}
	}
	return j
}

// lookup finds the planned end at e's port: by GUID, else by its
// node-name-map name, else by its description (a name several nodes of
// the plan carry is not looked up).
func (p *Plan) lookup(e FoundEnd) (endRef, bool) {
	if e.GUID != 0 {
		if r, ok := p.byGUID[portKey{e.GUID, e.Port}]; ok {
			return r, true
		}
	}
	for _, n := range []string{e.Name, e.Desc} {
		if n == "" || p.names[n] != 1 {
			continue
		}
		if r, ok := p.byName[nameKey{n, e.Port}]; ok {
			return r, true
		}
	}
	return endRef{}, false
}

// matches says whether the found end f is the planned end e: the same
// port of the same node, by GUID or by name (replaced hardware keeps its
// name).
func (p *Plan) matches(e End, f FoundEnd) bool {
	if e.Port != f.Port {
		return false
	}
	if e.GUID != 0 && e.GUID == f.GUID {
		return true
	}
	return e.Node != "" && (e.Node == f.Name || e.Node == f.Desc)
}
