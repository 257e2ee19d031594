package ibsimtest

import (
	"syscall"
)

// Faults for the fault-matrix tests: OpenSM dying under a running client
// and coming back (ibsim itself: Kill, Resume and Restart).

// KillSM kills the running OpenSM (Options.KeepSM) as a crash would, and
// waits for it to exit. The LIDs and forwarding tables stay in ibsim; the
// SA no longer answers.
func (f *Fabric) KillSM() {
	f.t.Helper()
	if f.sm == nil || f.sm.Process == nil {
		f.t.Fatal("ibsimtest: no OpenSM running (Options.KeepSM)")
	}
	_ = f.sm.Process.Signal(syscall.SIGKILL)
	_ = f.sm.Wait()
	f.sm = nil
}

// StartSM starts OpenSM again as Start did, and waits until it has swept
// the fabric and written its subnet list.
func (f *Fabric) StartSM() {
	f.t.Helper()
	if f.sm != nil {
		f.t.Fatal("ibsimtest: OpenSM is already running")
	}
	f.startSM()
}

// StartSMArgs is StartSM with other extra OpenSM arguments (Options.SMArgs)
// from now on: "-l", "2" brings every port a new, LMC-aligned LID.
func (f *Fabric) StartSMArgs(args ...string) {
	f.t.Helper()
	f.opts.SMArgs = args
	f.StartSM()
}
