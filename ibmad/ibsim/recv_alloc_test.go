package ibsim

import (
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/simwire"
)

// TestRecvDoesNotAllocate: receiving a response costs no heap
// allocation. The exporter's benchmark runs over this transport
// (scripts/bench-exporter.sh), about 1,400 MADs a second; a 512-byte
// buffer per read was 107 MB of garbage in 160 s there.
func TestRecvDoesNotAllocate(t *testing.T) {
	name := func(s string) *net.UnixAddr {
		return &net.UnixAddr{Name: fmt.Sprintf("@ibsimalloc%d:%s", os.Getpid(), s), Net: "unixgram"}
	}
	in, err := net.ListenUnixgram("unixgram", name("in"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	peer, err := net.DialUnix("unixgram", name("peer"), name("in"))
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	tr := &Transport{data: in, nodeInfo: ibmad.NodeInfo{NodeType: ibmad.NodeTypeCA, LocalPortNum: 1}}
	var p ibmad.Packet
	p.MAD[0], p.MAD[1], p.MAD[2], p.MAD[3] = 1, byte(ibmad.ClassSubnDR), 1, byte(ibmad.MethodGetResp)
	req := make([]byte, simwire.RequestSize)
	marshalRequest(req, &p, ibmad.QP0)
	var got ibmad.Packet
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := peer.Write(req); err != nil {
			t.Fatal(err)
		}
		if err := tr.Recv(&got); err != nil {
			t.Fatal(err)
		}
	})
	if got.MAD.Method() != ibmad.MethodGetResp {
		t.Fatalf("received method %v", got.MAD.Method())
	}
	if allocs > 0 {
		t.Errorf("%.1f allocations per received MAD, want 0", allocs)
	}
}
