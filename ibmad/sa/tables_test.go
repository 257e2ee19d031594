package sa

import (
	"context"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// The whole tables of the records the tracer reads one at a time: the
// tests read them to know what the SA should answer.

// PortInfoRecords returns the PortInfoRecords of the port with LID lid
// (a switch: all its ports), or of every port when lid is 0.
func PortInfoRecords(ctx context.Context, s Sender, sm ibmad.Address, lid uint16) ([]ibmad.PortInfoRecord, error) {
	return Table(ctx, s, sm, ibmad.AttrPortInfoRecord, compIf(lid, ibmad.PIRCompLID), ibmad.PortInfoRecord{LID: lid})
}

// LinkRecords returns every LinkRecord (both directions of each link), or
// those leaving LID fromLID when it is not 0.
func LinkRecords(ctx context.Context, s Sender, sm ibmad.Address, fromLID uint16) ([]ibmad.LinkRecord, error) {
	return Table(ctx, s, sm, ibmad.AttrLinkRecord, compIf(fromLID, ibmad.LRCompFromLID), ibmad.LinkRecord{FromLID: fromLID})
}

// LFTRecords returns every block of the switch with LID switchLID, or of
// every switch when switchLID is 0.
func LFTRecords(ctx context.Context, s Sender, sm ibmad.Address, switchLID uint16) ([]ibmad.LFTRecord, error) {
	return Table(ctx, s, sm, ibmad.AttrLFTRecord, compIf(switchLID, ibmad.LFTRCompLID), ibmad.LFTRecord{LID: switchLID})
}

// SwitchInfoRecords returns the SwitchInfoRecord of every switch.
func SwitchInfoRecords(ctx context.Context, s Sender, sm ibmad.Address) ([]ibmad.SwitchInfoRecord, error) {
	return Table(ctx, s, sm, ibmad.AttrSwitchInfoRecord, 0, ibmad.SwitchInfoRecord{})
}

// compIf returns comp when the caller named a LID (lid is not 0): a
// table of that LID's records; no component otherwise: every record.
func compIf(lid uint16, comp uint64) uint64 {
	if lid != 0 {
		return comp
	}
	return 0
}
