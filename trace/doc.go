// Package trace traces the path a LID-routed packet takes through an
// InfiniBand subnet and checks it hop by hop (docs/architecture.md, "The
// life of a trace"). It is the algorithm of the ibtracer command and of
// the exporter.
//
// A Tracer sends its MADs through an *ibmad.Engine on the local port:
//
//	tr := trace.New(engine, trace.Options{})
//	r := tr.Trace(ctx, trace.Destination{LID: 12})
//	fmt.Println(r.Summary())
//
// A trace walks from the local port to the destination with
// directed-route SMPs (NodeInfo, PortInfo and, at every switch, the LFT
// block that holds the DLID), or, where only the SM may send SMPs, from
// the SA's records (Options.Discovery). It then asks every hop on which
// port the trace's validation MAD arrived: our vendor agent where one
// runs, the hop's own SMA elsewhere (Options.Validate). An arrival on
// another port than the forwarding tables predict is status 7, a
// mismatch: the data plane does not follow the tables.
//
// Trace never returns an error: the Result says what happened (Status,
// Reason, Err), hop by hop (Hops, each with its verdict), and how it
// was learnt (Discovery, MADs, FastPath). Summary, WriteVerbose and JSON
// write it as the ibtracer command does. A destination is a LID, a GID,
// a port GUID or a node description (Destination, ParseDestination);
// the last three are resolved through the SA, and a success reached the
// port the destination names.
//
// A Tracer is safe for concurrent use, and its traces share what does not
// depend on the destination: resolutions, agent support, confirmed paths
// (a repeat trace of an unchanged path re-reads it all at once instead of
// walking) and, when Options ask, the hops' verdicts
// (ShareValidation) and the answers of the walk's SMPs (ShareFacts). A
// question several traces need at once is asked by one of them.
//
// Beyond Trace: TraceFrom traces from another port (ibtracert's SRC DST),
// TraceAll every LID of a port whose LMC gives it several (PathSet),
// TraceMulticast the path of a multicast LID (ibtracert -m), and
// AllCAPorts lists the CA ports to trace (ibtracer --all). The link
// health (package linkhealth) reads a traced path's ports through a
// Probe (ProbeFor).
//
// ExampleTracer_Trace traces a path across an in-process simulated
// fabric (ibmad/sim) whose every node runs the vendor agent.
package trace
