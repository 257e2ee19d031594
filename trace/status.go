package trace

// statusRank orders the outcomes from best to worst: a trace that fell
// short of its destination is worse the earlier it stopped (too long,
// unreachable, not resolved, no device), and a port mismatch, a wrong
// route the fabric is using, is the worst of all. ibtracer's exit status
// follows the same order (cmd/ibtracer, "Exit status").
var statusRank = map[Status]int{StatusOK: 0, StatusLeftSubnet: 0, StatusTooLong: 1, StatusUnreachable: 2, StatusResolve: 3,
	StatusDevice: 4, StatusMismatch: 5}

// Worse says whether s is a worse outcome than t. A status the package
// does not know counts as a device error.
func (s Status) Worse(t Status) bool { return s.rank() > t.rank() }

func (s Status) rank() int {
	if r, ok := statusRank[s]; ok {
		return r
	}
	return statusRank[StatusDevice]
}
