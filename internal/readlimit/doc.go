// Package readlimit reads the files an administrator names (the
// configuration, a node-name-map, a threshold file, a topology file, the
// web configuration) with a bound on their size, so that a wrong path
// (/dev/zero, a FIFO fed by an endless writer, a multi-gigabyte log)
// gives an error naming the file and the bound instead of exhausting
// memory. The bounds are far above any real file of the kind; they are
// listed in docs/runbook.md, "File size limits".
//
// Every such file is read through ReadFile: a regular file larger than
// the bound is refused from its size, and any file is read through an
// io.LimitReader of bound+1 bytes, so that one that keeps producing data
// is refused after bound+1 bytes. A file that must be a regular file
// (the web configuration and the files it names, read again while the
// exporter runs) is read through ReadRegularFile, which refuses a FIFO,
// a device, a directory or a socket at once, without opening a device or
// waiting for a FIFO's writer.
//
// The package is one file:
//   - readlimit.go: Kind and the kinds with their bounds, ReadFile,
//     ReadRegularFile, TooLargeError, NotRegularError, and Size, which
//     writes a bound for a person.
package readlimit
