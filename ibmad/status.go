package ibmad

import (
	"fmt"
	"strings"
)

// Status is the 16-bit MAD status field (IBA 13.4.7, docs/protocol.md).
type Status uint16

// Status values. The "invalid field" code is bits 4:2.
const (
	StatusOK                Status = 0x0000
	StatusBusy              Status = 0x0001
	StatusRedirect          Status = 0x0002
	StatusBadVersion        Status = 0x0004 // code 1
	StatusMethodUnsupported Status = 0x0008 // code 2
	StatusMethodAttrUnsupp  Status = 0x000C // code 3
	StatusInvalidField      Status = 0x001C // code 7: the seed's "status 7"
	statusCodeMask          Status = 0x001C
	// StatusDirection is the D bit of a directed-route SMP: not an error.
	StatusDirection Status = 0x8000
)

// SA class-specific status codes, (status >> 8).
const (
	SAStatusNoResources    = 1
	SAStatusReqInvalid     = 2
	SAStatusNoRecords      = 3
	SAStatusTooManyRecords = 4
	SAStatusInvalidGID     = 5
	SAStatusInsufficient   = 6
	SAStatusReqDenied      = 7
)

// Code returns the 3-bit "invalid field" code (0..7).
func (s Status) Code() int { return int(s&statusCodeMask) >> 2 }

// ClassSpecific returns bits 15:8.
func (s Status) ClassSpecific() uint8 { return uint8(s >> 8) }

// IsStatus7 reports whether s carries invalid-field code 7 (raw 0x001C):
// the seed design's "status 7", a port mismatch.
func (s Status) IsStatus7() bool { return s&statusCodeMask == StatusInvalidField }

// Err returns nil for a good status and an error describing s otherwise.
// For directed-route SMPs pass s with the D bit masked (use SMPStatus).
func (s Status) Err() error {
	if s == StatusOK {
		return nil
	}
	return &StatusError{Status: s}
}

func (s Status) String() string {
	if s == 0 {
		return "ok"
	}
	var parts []string
	if s&StatusBusy != 0 {
		parts = append(parts, "busy")
	}
	if s&StatusRedirect != 0 {
		parts = append(parts, "redirect")
	}
	switch s.Code() {
	case 1:
		parts = append(parts, "bad version")
	case 2:
		parts = append(parts, "method not supported")
	case 3:
		parts = append(parts, "method/attribute not supported")
	case 7:
		parts = append(parts, "invalid field")
	case 0:
	default:
		parts = append(parts, fmt.Sprintf("code %d", s.Code()))
	}
	if cs := s.ClassSpecific(); cs != 0 {
		parts = append(parts, fmt.Sprintf("class-specific 0x%02x", cs))
	}
	return fmt.Sprintf("0x%04x (%s)", uint16(s), strings.Join(parts, ", "))
}

// StatusError is a MAD that came back with a non-zero status.
type StatusError struct {
	Status Status
}

func (e *StatusError) Error() string { return "MAD status " + e.Status.String() }

// SAStatusString names an SA class-specific status (status >> 8).
func SAStatusString(code uint8) string {
	switch code {
	case SAStatusNoResources:
		return "no resources"
	case SAStatusReqInvalid:
		return "request invalid"
	case SAStatusNoRecords:
		return "no records"
	case SAStatusTooManyRecords:
		return "too many records"
	case SAStatusInvalidGID:
		return "invalid GID"
	case SAStatusInsufficient:
		return "insufficient components"
	case SAStatusReqDenied:
		return "request denied"
	}
	return fmt.Sprintf("SA status %d", code)
}
