// Package plan reads a site's cabling plan and judges the links a trace
// found against it (docs/runbook.md, "The fabric as planned").
//
// A plan is read from either of the forms sites already keep:
//
//   - ibnetdiscover's output, taken when the fabric was right (the form
//     of testdata/topologies/*.net and of ibnetdiscover itself: Switch,
//     Hca/Ca and Rt blocks of `[port] "remote"[rport]` lines, the nodes
//     named by their description or by GUID ids such as
//     "S-0002c90300a1b2c3" with the description in the `#` comment, and
//     the width and speed, such as 4xQDR, in that comment too);
//   - the ibdm topology file that `ibdiagnet -wt` writes and `-t` reads:
//     a block per system, `TYPE NAME` at the start of a line and one
//     indented line per cabled port, `P1 -4x-10G-> TYPE NAME P3`, the
//     width and lane speed optional (`P1 -> TYPE NAME P3`).
//
// Parse tells the forms apart by their first significant line. A
// malformed plan is an error naming the file, the line and what is wrong
// (*ParseError).
//
// A found link's ends are matched to the plan's nodes by GUID where the
// plan has GUIDs, and by name (a node-name-map name or the node
// description) everywhere: replaced hardware keeps its name, not its
// GUID, and is not a miswiring. A name that more than one node of the
// plan carries matches by GUID only. Plan.Judge classifies a link:
//
//   - planned: both ends as the plan cables them, as wide and fast;
//   - miswired: an end's planned far end is elsewhere (Judgement.WantA
//     and WantB say where each end should go);
//   - not_in_plan: neither end is a cabled port of the plan;
//   - below_plan: cabled as planned, narrower or slower than planned.
//
// WriteIBNetDiscover writes links in ibnetdiscover's form, so a plan can
// be taken from what the traces see (ibtracer --plan FILE --write).
package plan
