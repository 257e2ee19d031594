// Package nodenamemap reads the OFED node-name-map file that ibnetdiscover,
// ibtracert and OpenSM use to give nodes site names: one node a line, its
// node GUID and then its name, usually quoted:
//
//	# comment
//	0x0002c90300a1b2c3 "leaf01 rack12"
//
// As the OFED tools read it: the GUID is a C integer (0x hex, a leading 0
// octal, otherwise decimal); the name is what follows it up to the next
// double quote or #, leading quotes and # skipped; a line whose GUID has
// no name adds nothing; when a GUID comes twice the first name wins. A
// line that does not start with a number is an error naming the line.
//
// The package is one file:
//   - nodenamemap.go: Map (Name), Load (bounded by readlimit), Parse and
//     Error, a line it could not read.
package nodenamemap
