package trace

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

// classRecorder counts the MADs a transport sends, by management class.
type classRecorder struct {
	ibmad.Transport
	mu   sync.Mutex
	sent map[ibmad.MgmtClass]int
}

func (c *classRecorder) Send(p *ibmad.Packet) error {
	c.mu.Lock()
	c.sent[ibmad.MgmtClass(p.MAD[1])]++
	c.mu.Unlock()
	return c.Transport.Send(p)
}

func (c *classRecorder) take() map[ibmad.MgmtClass]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sent
	c.sent = map[ibmad.MgmtClass]int{}
	return s
}

// TestMulticastSendsNoValidation: a multicast trace with validation on
// (auto) sends directed-route SMPs only: no vendor MAD and no LID-routed
// SMP, and says why in its note; a unicast trace on the same tracer does
// send validation MADs, so the recorder sees them when they are sent.
func TestMulticastSendsNoValidation(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join("..", "testdata", "topologies", "fattree-mini.net"), ibsimtest.Options{KeepSM: true, SMHost: true})
	mlid, err := fab.Join(ibsimtest.MGID(9), "H0-0", "H1-1")
	if err != nil {
		t.Fatal(err)
	}
	dst := discoverCAs(t, fab, "H0-0")["H1-1"].lid
	rec := &classRecorder{Transport: fab.Dial("H0-0", false), sent: map[ibmad.MgmtClass]int{}}
	e := ibmad.NewEngine(rec, ibmad.Options{Timeout: time.Second, Retries: 1})
	defer e.Close()
	tr := New(e, Options{Timeout: time.Second, Retries: new(1), Validate: ValidateAuto})
	ctx := context.Background()
	var r *Result
	deadline := time.Now().Add(20 * time.Second) // OpenSM programs a new group's MFTs on its next pass
	for r = tr.TraceMulticast(ctx, mlid, 0, dst); r.Status != StatusOK && time.Now().Before(deadline); r = tr.TraceMulticast(ctx, mlid, 0, dst) {
		time.Sleep(200 * time.Millisecond)
	}
	if r.Status != StatusOK || len(r.Hops) < 3 {
		t.Fatalf("multicast trace: %s", r.Summary())
	}
	rec.take()
	r = tr.TraceMulticast(ctx, mlid, 0, dst)
	sent := rec.take()
	if r.Status != StatusOK || sent[ibmad.ClassSubnDR] == 0 || len(sent) != 1 {
		t.Fatalf("multicast trace %s sent %v; want directed-route SMPs only", r.Summary(), sent)
	}
	if r.ValidationNote != MulticastNote || r.Count(AgentNotAsked) != len(r.Hops)-1 {
		t.Errorf("note %q, %d of %d hops not_asked", r.ValidationNote, r.Count(AgentNotAsked), len(r.Hops)-1)
	}
	u := tr.Trace(ctx, Destination{LID: dst})
	if sent := rec.take(); len(sent) < 2 {
		t.Errorf("unicast trace (%s) sent only %v: the recorder would not see validation MADs", u.Summary(), sent)
	}
}
