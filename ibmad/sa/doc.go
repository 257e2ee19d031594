// Package sa asks the subnet administrator (SA) for its records
// (docs/protocol.md, "SA queries", "SA tables (GetTable and RMPP)" and
// "SA-only discovery").
//
// Every function takes a Sender, which an *ibmad.Engine is, and the SA's
// address, which Address reads from the local port (its SM LID and SL).
// A caller that must set every request's timeout and retries, or count
// the MADs it sends, as the tracer does for each trace, passes its own
// Sender.
//
// One record is asked with a SubnAdmGet, which the SA answers in one
// MAD: NodeRecordOf, PortInfoRecord, LinkRecordFrom and LFTRecord, or Get
// for any attribute. A whole table is asked with a SubnAdmGetTable,
// reassembled from RMPP by the engine: NodeRecords, Table for any record
// type, or GetTable for the raw records.
//
// An SA that has no record answers with a status: the error wraps an
// *ibmad.StatusError, and IsNoRecords tells "no such record" from the
// rest. On ibsim the SA's tables are cut to their first MAD (libumad2sim
// does not segment): the table functions then return the records of that
// MAD and an error wrapping ibmad.ErrTableTruncated.
//
//	port, _ := transport.Port()
//	recs, err := sa.NodeRecords(ctx, engine, sa.Address(port))
//
// ExampleNodeRecords reads the NodeRecord table of an in-process
// simulated fabric (ibmad/sim).
package sa
