package ibsimtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Faults for the fault-matrix tests: OpenSM or ibsim dying under a running
// client and coming back. Each takes the Options the fabric was started
// with.

// smNode is where OpenSM attaches under o.
func smNode(o Options) string {
	if o.SMHost {
		return SMHostName
	}
	return o.SMNode
}

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

// StartSM starts OpenSM again, kept running, at the node o names, and
// waits until it has swept the fabric and written its subnet list.
func (f *Fabric) StartSM(o Options) {
	f.t.Helper()
	if f.sm != nil {
		f.t.Fatal("ibsimtest: OpenSM is already running")
	}
	list := filepath.Join(f.Dir, "opensm-subnet.lst")
	_ = os.Remove(list)
	args := []string{"-f", filepath.Join(f.Dir, "opensm.log")}
	if o.SweepSeconds > 0 {
		args = append(args, "-s", strconv.Itoa(o.SweepSeconds))
	}
	sm := exec.CommandContext(f.ctx, lookPath("opensm"), args...)
	sm.Dir = f.Dir
	sm.Env = append(f.env(smNode(o), true), "OSM_CACHE_DIR="+f.Dir, "OSM_TMP_DIR="+f.Dir)
	out := &syncBuffer{}
	sm.Stdout, sm.Stderr = out, out
	if err := sm.Start(); err != nil {
		f.t.Fatalf("start opensm: %v", err)
	}
	f.sm = sm
	f.waitFile("opensm-subnet.lst", 60*time.Second)
}

// KillIbsim kills ibsim as a crash would (SIGKILL) and waits for it to
// exit; OpenSM, whose simulated device it was, is killed with it. Clients
// attached to it (Dial) are left to notice on their own.
func (f *Fabric) KillIbsim() {
	f.t.Helper()
	if f.sm != nil {
		f.KillSM()
	}
	_ = f.ibsim.Process.Signal(syscall.SIGKILL)
	_ = f.ibsim.Wait()
	_ = f.console.Close()
}

// RestartIbsim starts ibsim again on the same topology under the same
// IBSIM_SOCKNAME, then OpenSM (kept running when o.KeepSM, else one sweep)
// to assign the LIDs and program the forwarding tables again; OpenSM's
// cache in the fabric's directory gives every port the LID it had.
func (f *Fabric) RestartIbsim(o Options) {
	f.t.Helper()
	if f.ibsim.ProcessState == nil {
		f.t.Fatal("ibsimtest: ibsim is still running; KillIbsim first")
	}
	f.ibsim = exec.CommandContext(f.ctx, lookPath("ibsim"), "-s", f.Topology)
	f.ibsim.Dir = f.Dir
	f.ibsim.Env = append(os.Environ(), "IBSIM_SOCKNAME="+f.SockName)
	f.ibsimOut = &syncBuffer{}
	f.ibsim.Stdout, f.ibsim.Stderr = f.ibsimOut, f.ibsimOut
	var err error
	if f.console, err = f.ibsim.StdinPipe(); err != nil {
		f.t.Fatal(err)
	}
	if err := f.ibsim.Start(); err != nil {
		f.t.Fatalf("restart ibsim: %v", err)
	}
	f.waitServing()
	if o.KeepSM {
		f.StartSM(o)
		return
	}
	out, err := f.ToolEnv(smNode(o), []string{"OSM_CACHE_DIR=" + f.Dir, "OSM_TMP_DIR=" + f.Dir},
		"opensm", "-o", "-f", filepath.Join(f.Dir, "opensm.log"))
	if err != nil {
		f.t.Fatal(fmt.Errorf("opensm -o after the restart: %v\n%s\n%s", err, out, f.tail("opensm.log")))
	}
}

// waitServing waits for the new ibsim's control socket. Unlike waitSocket
// it matches the server's socket only (" @NAME:ctl@" in /proc/net/unix; a
// client's is @NAME:ctlID@), since clients of the killed ibsim may still
// hold theirs.
func (f *Fabric) waitServing() {
	want := []byte(" @" + f.SockName + ":ctl@\n")
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile("/proc/net/unix"); bytes.Contains(b, want) {
			return
		}
		if f.ibsim.ProcessState != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.t.Fatalf("the restarted ibsim did not open @%s:ctl within 20s; its output:\n%s", f.SockName, f.ibsimOut.String())
}
