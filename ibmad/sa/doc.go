// Package sa reads the subnet administrator's tables: a GetTable of any
// record (reassembled from RMPP by ibmad.Engine.GetTable) and typed
// helpers for the records the tracer uses: NodeRecord, PortInfoRecord,
// LinkRecord, LinearForwardingTableRecord and SwitchInfoRecord
// (docs/protocol.md, "RMPP"; docs/architecture.md).
//
// On ibsim the SA's answers are cut to their first MAD (libumad2sim does
// not segment): a table helper then returns the records of that MAD and
// an error wrapping ibmad.ErrTableTruncated. The one-record helpers
// (NodeRecordOf, LFTRecord, PortInfoRecord, LinkRecordFrom) always fit
// one MAD.
//
// What each file holds:
//   - sa.go: Address (the SM's GSI address), IsNoRecords, GetTable and Get
//     (raw records), the generic decoding of a table, and one helper per
//     record kind (NodeRecords, NodeRecordOf, PortInfoRecords,
//     PortInfoRecord, LinkRecords, LinkRecordFrom, LFTRecord, LFTRecords,
//     SwitchInfoRecords).
//   - mcmember.go: MCMemberRecord and Join, an SA Set that joins (or
//     creates) a multicast group.
package sa
