package ibsimtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CPU time of the fabric's processes, for the benchmarks that say what a
// query costs OpenSM (docs/architecture.md, "Load on one switch").

// SMCPU returns the CPU time the running OpenSM (Options.KeepSM) has used
// so far, all its threads (libumad2sim's receiver included), in
// nanoseconds.
func (f *Fabric) SMCPU() (time.Duration, error) {
	if f.sm == nil || f.sm.Process == nil {
		return 0, fmt.Errorf("ibsimtest: no OpenSM running (Options.KeepSM)")
	}
	return ProcessCPU(f.sm.Process.Pid)
}

// IbsimCPU returns the CPU time ibsim has used so far.
func (f *Fabric) IbsimCPU() (time.Duration, error) {
	if f.ibsim == nil || f.ibsim.Process == nil {
		return 0, fmt.Errorf("ibsimtest: ibsim is not running")
	}
	return ProcessCPU(f.ibsim.Process.Pid)
}

// ProcessCPU returns the CPU time of every thread of process pid: the sum
// of the first field (time on a CPU, in nanoseconds) of each
// /proc/PID/task/TID/schedstat. /proc/PID/stat's utime and stime say the
// same in clock ticks (10 ms), too coarse for a few thousand queries.
func ProcessCPU(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("process %d: no /proc/%d/task/*/schedstat", pid, pid)
	}
	var sum time.Duration
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread exited
		}
		fields := strings.Fields(string(b))
		if len(fields) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q: %v", p, b, err)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}

// ProcessStatCPU returns utime + stime of process pid from /proc/PID/stat
// (every thread, exited ones too), in clock ticks of 10 ms (USER_HZ 100,
// as Linux has it on every architecture we build for).
func ProcessStatCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	fields := strings.Fields(string(b[i+1:])) // fields 3 onwards
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime (14), stime (15)
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %q: %v", pid, f, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// SMPID returns the running OpenSM's process ID, or 0.
func (f *Fabric) SMPID() int {
	if f.sm == nil || f.sm.Process == nil {
		return 0
	}
	return f.sm.Process.Pid
}
