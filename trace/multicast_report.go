package trace

import (
	"fmt"
	"io"
)

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
