package ibsimtest

import (
	"context"
	"fmt"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sa"
)

// MGID returns a multicast GID of link-local scope for test group n.
func MGID(n uint16) ibmad.GID {
	var g ibmad.GID
	g[0], g[1], g[2], g[3] = 0xff, 0x12, 0x1b, 0x7e // ff12:1b7e::n
	g[14], g[15] = byte(n>>8), byte(n)
	return g
}

// Join makes the port of each node a full member of the group mgid with
// an SA MCMemberRecord Set sent from that node (OpenSM, kept running with
// Options.KeepSM, then programs the switches' MulticastForwardingTables),
// and returns the group's MLID. Every node must get the same MLID.
func (f *Fabric) Join(mgid ibmad.GID, nodes ...string) (uint16, error) {
	var mlid uint16
	for _, node := range nodes {
		got, err := f.joinFrom(node, mgid)
		if err != nil {
			return 0, fmt.Errorf("join %s from %s: %w", mgid, node, err)
		}
		if mlid != 0 && got != mlid {
			return 0, fmt.Errorf("join %s from %s: the SA answered MLID 0x%04x, earlier members got 0x%04x", mgid, node, got, mlid)
		}
		mlid = got
	}
	return mlid, nil
}

func (f *Fabric) joinFrom(node string, mgid ibmad.GID) (uint16, error) {
	tr, err := ibsim.Dial(f.Options(node, false))
	if err != nil {
		return 0, err
	}
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 2 * time.Second, Retries: 3})
	defer e.Close()
	p, err := e.Port()
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec, err := Join(ctx, e, sa.Address(p), mgid, p.GID())
	if err != nil {
		return 0, err
	}
	if rec.MLID < ibmad.MLIDBase {
		return 0, fmt.Errorf("the SA answered MLID 0x%04x, not a multicast LID", rec.MLID)
	}
	return rec.MLID, nil
}
