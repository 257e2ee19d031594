package ibsim_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

func selfNodeInfo(e *ibmad.Engine) error {
	req := &ibmad.Request{Addr: ibmad.DRAddress(), Timeout: 500 * time.Millisecond, Retries: 1}
	s, _ := ibmad.NewDRGet(ibmad.AttrNodeInfo, 0, nil)
	_ = s.MarshalTo(req.MAD[:])
	return e.Do(context.Background(), req, &ibmad.Response{})
}

// TestIbsimRestart: when ibsim dies the engine learns it, even idle (its
// port probe), requests fail as device errors rather than routing
// verdicts, and a new Dial under the same socket name attaches to the
// restarted ibsim.
func TestIbsimRestart(t *testing.T) {
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "two-switch.net"), ibsimtest.Options{})
	tr := fab.Dial("host1", false)
	e := ibmad.NewEngine(tr, ibmad.Options{PortRefresh: 50 * time.Millisecond})
	defer e.Close()
	if err := selfNodeInfo(e); err != nil {
		t.Fatal(err)
	}
	fab.Restart()
	select {
	case <-e.Lost():
	case <-time.After(20 * time.Second):
		t.Fatal("the engine did not notice within 20s that ibsim was restarted")
	}
	if err := selfNodeInfo(e); !errors.Is(err, ibmad.ErrDeviceLost) {
		t.Fatalf("request on the old transport: %v, want ErrDeviceLost", err)
	}
	tr2, err := ibsim.Dial(fab.Options("host1", false))
	if err != nil {
		t.Fatalf("dial the restarted ibsim: %v", err)
	}
	e2 := ibmad.NewEngine(tr2, ibmad.Options{})
	defer e2.Close()
	if err := selfNodeInfo(e2); err != nil {
		t.Fatalf("after reconnecting: %v", err)
	}
	if st := e.Stats(); st.Classes[0].SendErrors == 0 && st.RecvErrors == 0 {
		t.Logf("old engine stats %+v", st)
	}
}
