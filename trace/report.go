package trace

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// JSONHop is one hop in the JSON report (docs/protocol.md and the README's ibtracer section).
type JSONHop struct {
	Hop            int    `json:"hop"`
	NodeGUID       string `json:"node_guid"`
	PortGUID       string `json:"port_guid"`
	NodeType       string `json:"node_type"`
	NodeDesc       string `json:"node_desc"`
	NodeName       string `json:"node_name,omitempty"` // from a node-name map
	LID            uint16 `json:"lid"`
	LMC            uint8  `json:"lmc"`
	InPort         uint8  `json:"in_port"`
	OutPort        uint8  `json:"out_port"`
	AgentStatus    string `json:"agent_status"`
	Verdict        string `json:"verdict"`                // the same as agent_status, in a name that does not say who gave it
	ValidatedBy    string `json:"validated_by,omitempty"` // agent or sma: who gave the verdict (sma.go)
	ActualInPort   *uint8 `json:"actual_in_port,omitempty"`
	ExpectedInPort *uint8 `json:"expected_in_port,omitempty"`
	// CheckedLink is the link a hop validated_other_link's MAD crossed
	// last instead of the traced one (verdicts.go).
	CheckedLink *JSONLink `json:"checked_link,omitempty"`
	// DivergedAt is the switch whose forwarding diverged from its table,
	// for a mismatch that names it (verdicts.go).
	DivergedAt   *JSONDivergence `json:"diverged_at,omitempty"`
	RTTSeconds   float64         `json:"rtt_seconds"`
	AgentRTTSecs float64         `json:"agent_rtt_seconds,omitempty"`
}

// JSONLink is one link: the node and port it leaves from, the port it
// enters the next node by.
type JSONLink struct {
	FromGUID string `json:"from_guid"`
	FromName string `json:"from_name,omitempty"`
	FromPort uint8  `json:"from_port"`
	InPort   uint8  `json:"in_port"`
}

// JSONDivergence is the switch that sent a mismatched hop's MAD out of
// another port than its LFT names.
type JSONDivergence struct {
	SwitchGUID string `json:"switch_guid"`
	SwitchName string `json:"switch_name,omitempty"`
	OutPort    uint8  `json:"out_port"`
	LFTPort    uint8  `json:"lft_port"`
}

// JSONResult is one trace in the JSON report.
type JSONResult struct {
	Destination     string   `json:"destination"`
	Address         string   `json:"address"`
	DLID            uint16   `json:"dlid,omitempty"`
	SourceLID       uint16   `json:"source_lid,omitempty"` // a trace from another port (SRC DST)
	MLID            string   `json:"mlid,omitempty"`       // a multicast trace (-m): its MLID, 0xC000..0xFFFE
	ValidationNote  string   `json:"validation_note,omitempty"`
	Port            uint8    `json:"port,omitempty"` // the port a node destination resolved to
	Status          string   `json:"status"`
	Reason          string   `json:"reason,omitempty"`
	Error           string   `json:"error,omitempty"`
	PathHops        int      `json:"path_hops"`
	MADs            int      `json:"mads"`
	SharedFacts     int      `json:"shared_facts"` // answers taken from other traces' questions instead of asking (facts.go)
	DurationSeconds float64  `json:"duration_seconds"`
	FastPath        bool     `json:"fast_path"`
	Discovery       string   `json:"discovery,omitempty"`   // smp or sa
	SARequests      int      `json:"sa_requests,omitempty"` // SA record requests of an SA-mode walk
	Verdicts        Verdicts `json:"verdicts"`              // the hops after the source by verdict, as the text counts them
	// Coverage: the path's links a validation MAD crossed last and
	// confirmed (verdicts.go); CoverageRatio is their share (0..1).
	Coverage      Coverage `json:"coverage"`
	CoverageRatio float64  `json:"coverage_ratio"`
	// Addressing: the SL of the validation MADs and whether they carried
	// a GRH (addressing.go); absent when nothing was resolved (multicast).
	Addressing *JSONAddressing `json:"addressing,omitempty"`
	Beyond     *JSONBeyond     `json:"beyond,omitempty"` // past the router where the path left the subnet (subnet.go)
	Time       time.Time       `json:"time"`
	Hops       []JSONHop       `json:"hops"`
}

// JSON returns the report form of r.
func (r *Result) JSON() JSONResult {
	j := JSONResult{Destination: r.Destination.String(), Address: r.Destination.Address(), DLID: r.DLID, SourceLID: r.From, Port: r.Port,
		Status: string(r.Status), Reason: string(r.Reason), PathHops: r.PathHops(), MADs: r.MADs, SharedFacts: r.SharedFacts,
		DurationSeconds: r.Duration.Seconds(), FastPath: r.FastPath, Discovery: string(r.Discovery), SARequests: r.SARequests,
		Verdicts: r.Verdicts(), Coverage: r.Coverage(), CoverageRatio: r.Coverage().Ratio(), Time: r.Start.UTC(), Hops: make([]JSONHop, 0, len(r.Hops)), Addressing: r.Addressing.JSON(), Beyond: r.Beyond.json()}
	if r.Err != nil {
		j.Error = r.Err.Error()
	}
	if r.MLID != 0 {
		j.MLID, j.ValidationNote = fmt.Sprintf("0x%04x", r.MLID), r.ValidationNote
	}
	for _, h := range r.Hops {
		jh := JSONHop{Hop: h.Hop, NodeGUID: h.NodeGUID.String(), PortGUID: h.PortGUID.String(), NodeType: h.NodeType.String(),
			NodeDesc: h.NodeDesc, NodeName: h.NodeName, LID: h.LID, LMC: h.LMC, InPort: h.InPort, OutPort: h.OutPort, AgentStatus: string(h.verdict()),
			Verdict: string(h.verdict()), ValidatedBy: string(h.ValidatedBy),
			RTTSeconds: h.RTT.Seconds(), AgentRTTSecs: h.AgentRTT.Seconds()}
		switch h.Agent {
		case AgentValidated, AgentValidatedOtherLink, AgentMismatch, AgentMismatchOtherLink:
			a, e := h.ActualInPort, h.ExpectedInPort
			jh.ActualInPort, jh.ExpectedInPort = &a, &e
		}
		if d := h.Diverged; d != nil {
			jh.DivergedAt = &JSONDivergence{SwitchGUID: d.Switch.String(), SwitchName: d.SwitchName, OutPort: d.OutPort, LFTPort: d.LFTPort}
		}
		if h.Agent == AgentValidatedOtherLink || h.Agent == AgentMismatchOtherLink {
			jh.CheckedLink = &JSONLink{FromGUID: h.ExpectedFrom.String(), FromName: h.ExpectedFromName, FromPort: h.ExpectedFromPort, InPort: h.ExpectedInPort}
		}
		j.Hops = append(j.Hops, jh)
	}
	return j
}

// verdict is h.Agent, never empty: a hop built without one (a Result put
// together by hand) was not asked.
func (h *Hop) verdict() AgentStatus {
	if h.Agent == "" {
		return AgentNotAsked
	}
	return h.Agent
}

func lidRange(h *Hop) string {
	return fmt.Sprintf("%d-%d", h.LID, uint32(h.LID)+uint32(1)<<(h.LMC&7)-1)
}

// Summary is the one-line text form of r.
func (r *Result) Summary() string {
	dest := r.Destination.Address()
	if r.Destination.Name != "" && r.Destination.Name != dest {
		dest += " (" + r.Destination.Name + ")"
	}
	if r.From != 0 {
		dest += fmt.Sprintf(" from lid %d", r.From)
	}
	if r.MLID != 0 {
		dest = fmt.Sprintf("mlid 0x%04x %s", r.MLID, dest)
	}
	if r.DLID != 0 && r.Destination.LID == 0 {
		dest += fmt.Sprintf(" -> lid %d", r.DLID)
		if r.Port != 0 && r.Destination.Port == 0 {
			dest += fmt.Sprintf(" (port %d)", r.Port)
		}
	}
	switch r.Status {
	case StatusOK:
		return fmt.Sprintf("%s: ok: %d hops, %s, %s, %d MADs in %s%s", dest, r.PathHops(), r.Verdicts(), r.Coverage(), r.MADs,
			r.Duration.Round(time.Microsecond), offPathText(r.Hops))
	case StatusMismatch:
		var parts []string
		for _, h := range r.Hops {
			if h.Agent == AgentMismatch {
				p := fmt.Sprintf("hop %d %s arrived on port %d, the forwarding tables predict port %d",
					h.Hop, name(&h), h.ActualInPort, h.ExpectedInPort)
				if h.Diverged != nil {
					p += ": diverging switch " + h.Diverged.String()
				}
				parts = append(parts, p)
			}
		}
		return fmt.Sprintf("%s: PORT MISMATCH (status 7): %s%s", dest, strings.Join(parts, "; "), offPathText(r.Hops))
	case StatusLeftSubnet:
		return r.leftSummary(dest)
	}
	return fmt.Sprintf("%s: %s: %v", dest, strings.ReplaceAll(string(r.Status), "_", " "), r.Err)
}

// WriteVerbose writes the path one line per hop, in ibtracert's format
// with the agent's verdict appended.
func (r *Result) WriteVerbose(w io.Writer) {
	fmt.Fprintln(w, r.Summary())
	if r.ValidationNote != "" {
		fmt.Fprintln(w, "Note: "+r.ValidationNote)
	}
	if r.Addressing != nil {
		fmt.Fprintln(w, "Validation MADs: "+r.Addressing.String())
	}
	for i := range r.Hops {
		h := &r.Hops[i]
		verdict := h.verdictText()
		switch h.Agent {
		case AgentValidated:
			verdict += fmt.Sprintf(" (in port %d)", h.ActualInPort)
		case AgentValidatedOtherLink:
			// The validation MAD is addressed to the hop's own LID, whose
			// route may end over another link (a parallel cable): that link
			// was checked, the traced one was not (verdicts.go).
			verdict += fmt.Sprintf(" (its own LID's route crossed %s, as predicted; the traced link was not checked)", h.checkedLink())
		case AgentMismatch, AgentMismatchOtherLink:
			verdict += fmt.Sprintf(" (in port %d, expected %d", h.ActualInPort, h.ExpectedInPort)
			if h.Agent == AgentMismatchOtherLink {
				verdict += fmt.Sprintf(" by its own LID's route over %s, not the traced link, which was not checked", h.checkedLink())
			}
			if h.Diverged != nil {
				verdict += "; diverging switch " + h.Diverged.String()
			}
			verdict += ")"
		}
		switch {
		case i == 0:
			port := h.OutPort
			if h.NodeType.String() == "switch" {
				port = 0
			}
			fmt.Fprintf(w, "From %s {%s} portnum %d lid %s %q\n", h.NodeType, h.NodeGUID, port, lidRange(h), h.shownName())
		default:
			fmt.Fprintf(w, "[%d] -> %s port {%s}[%d] lid %s %q %s\n", r.Hops[i-1].OutPort, h.NodeType, h.PortGUID,
				h.InPort, lidRange(h), h.shownName(), verdict)
		}
	}
	if r.Status == StatusOK || r.Status == StatusMismatch {
		h := &r.Hops[len(r.Hops)-1]
		port := h.InPort
		if h.NodeType.String() == "switch" {
			port = 0
		}
		fmt.Fprintf(w, "To %s {%s} portnum %d lid %s %q\n", h.NodeType, h.NodeGUID, port, lidRange(h), h.shownName())
	}
	r.writeBeyond(w)
}

// verdictText is the verdict as -v shows it, after who gave it: "agent
// validated", "sma ingress_unknown"; a hop no SMA was asked for says
// "agent", as before validation by the SMA.
func (h *Hop) verdictText() string {
	who := "agent"
	if h.ValidatedBy == BySMA {
		who = "sma"
	}
	s := who + " " + string(h.verdict())
	if h.ValidatedBy == BySMA && h.Agent == AgentIngressUnknown {
		s += " (LocalPortNum 0: this SMA does not tell LID-routed SMPs' port)"
	}
	return s
}

// shownName is what the verbose form quotes for a hop: its site name when
// a node-name map gave one, as ibtracert prints it, else its description.
func (h *Hop) shownName() string {
	if h.NodeName != "" {
		return h.NodeName
	}
	return h.NodeDesc
}

// WriteMulticast writes a multicast trace in ibtracert -m's format (From
// line, one "[out] -> type guid[in] lid" line per hop, To line), each hop
// with its verdict, which is always not_asked (MulticastNote). The From
// line's port is the source's LocalPortNum as the walk read it (the
// source hop's InPort): a CA's port, or the port a switch was entered by.
func (r *Result) WriteMulticast(w io.Writer) {
	fmt.Fprintln(w, r.Summary())
	if r.ValidationNote != "" {
		fmt.Fprintln(w, "Note: "+r.ValidationNote)
	}
	for i := range r.Hops {
		h := &r.Hops[i]
		if i == 0 {
			fmt.Fprintf(w, "From %s 0x%x port %d lid %s %q\n", h.NodeType, uint64(h.NodeGUID), h.InPort, lidRange(h), h.shownName())
			continue
		}
		fmt.Fprintf(w, "[%d] -> %s 0x%x[%d] lid %d %q %s\n", r.Hops[i-1].OutPort, h.NodeType, uint64(h.NodeGUID), h.InPort,
			h.LID, h.shownName(), h.verdictText())
	}
	if r.Status == StatusOK && len(r.Hops) > 1 {
		h := &r.Hops[len(r.Hops)-1]
		fmt.Fprintf(w, "To %s 0x%x port %d lid %s %q\n", h.NodeType, uint64(h.NodeGUID), h.InPort, lidRange(h), h.shownName())
	}
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
	return s + fmt.Sprintf(", %d MADs in %s%s", r.MADs, r.Duration.Round(time.Microsecond), offPathText(r.Hops))
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
