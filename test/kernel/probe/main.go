// Command probe runs the real-kernel checks inside a test guest
// (test/kernel): each subcommand opens the umad device through the
// product's packages, does one thing against Linux's ib_umad, and prints
// one line "KT PASS <check> <detail>" or "KT FAIL <check> <detail>".
// It is a test program, built static and copied into the guest's
// initramfs by test/kernel/run.sh; no product binary depends on it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/umad"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: probe open|perm|serve|conflict|ask|timeout|refused|ping|nosmi [flags]")
		os.Exit(2)
	}
	cmd := os.Args[1]
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	gid := fs.String("gid", "", "the peer's GID")
	want := fs.String("want", "", "ping: the answer expected")
	wait := fs.Duration("wait", 60*time.Second, "how long to wait for the peer's agent")
	_ = fs.Parse(os.Args[2:])
	ok := true
	switch cmd {
	case "open":
		ok = roce()
	case "perm":
		ok = perm()
	case "serve":
		serve()
	case "conflict":
		ok = conflict()
	case "ask":
		ok = ask(mustGID(*gid), *wait)
	case "timeout":
		ok = timeout(mustGID(*gid))
	case "refused":
		ok = refused(mustGID(*gid))
	case "ping":
		ok = ping(mustGID(*gid), *want)
	case "nosmi":
		ok = noSMI(mustGID(*gid))
	default:
		fmt.Fprintln(os.Stderr, "unknown subcommand", cmd)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func mustGID(s string) ibmad.GID {
	g, err := ibmad.ParseGID(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe: -gid:", err)
		os.Exit(2)
	}
	return g
}

func result(check string, pass bool, format string, a ...any) bool {
	word := "PASS"
	if !pass {
		word = "FAIL"
	}
	detail := strings.ReplaceAll(fmt.Sprintf(format, a...), "\n", " ")
	fmt.Printf("KT %s %s %s\n", word, check, detail)
	return pass
}

func open() (*ibmad.Engine, error) {
	t, err := umad.Open(umad.Options{})
	if err != nil {
		return nil, err
	}
	return ibmad.NewEngine(t, ibmad.Options{Timeout: 500 * time.Millisecond, Retries: 1}), nil
}

// roce: with the port's real link layer (Ethernet), the port choice names
// the RoCE port and says what is needed.
func roce() bool {
	e, err := open()
	if err == nil {
		e.Close()
		return result("roce_message", false, "opened a RoCE port")
	}
	return result("roce_message", errors.Is(err, umad.ErrRoCEPort) && strings.Contains(err.Error(), "rxe0 port 1 is RoCE"),
		"%v", err)
}

// perm: a user without access to the umad device gets the message that
// says what to do.
func perm() bool {
	if err := syscall.Setgid(65534); err != nil {
		return result("permission_message", false, "setgid: %v", err)
	}
	if err := syscall.Setuid(65534); err != nil {
		return result("permission_message", false, "setuid: %v", err)
	}
	e, err := open()
	if err == nil {
		e.Close()
		return result("permission_message", false, "opened the device as uid 65534")
	}
	return result("permission_message", errors.Is(err, os.ErrPermission) && strings.Contains(err.Error(), "run it as root"), "%v", err)
}

// serve hosts the agent (with the ibping responder) until killed.
func serve() {
	e, err := open()
	if err != nil {
		result("agent_registration", false, "%v", err)
		os.Exit(1)
	}
	if _, err := agent.New(e, agent.Config{Ping: true, Hostname: "kt-serve"}); err != nil {
		result("agent_registration", false, "%v", err)
		os.Exit(1)
	}
	result("agent_registration", true, "classes 0x30 and 0x32 registered with REGISTER_AGENT2")
	select {}
}

// conflict: a second process registering the agent's classes gets the
// clear message.
func conflict() bool {
	e, err := open()
	if err != nil {
		return result("agent_conflict", false, "open: %v", err)
	}
	defer e.Close()
	_, err = agent.New(e, agent.Config{Ping: true, Hostname: "kt-conflict"})
	return result("agent_conflict", err != nil && strings.Contains(err.Error(), "another process on this port"), "%v", err)
}

// grh addresses the peer's QP1 by GID, as the tracer does beyond a LID.
func grh(g ibmad.GID) ibmad.Address {
	return ibmad.Address{QPN: ibmad.QP1, QKey: ibmad.QP1QKey, GRHPresent: true, GID: g, HopLimit: 64}
}

func vendorReq(class ibmad.MgmtClass, oui ibmad.OUI, attr ibmad.AttrID, addr ibmad.Address, fill func([]byte)) *ibmad.Request {
	v := ibmad.NewVendorGet(class, oui, attr, 0)
	if fill != nil {
		fill(v.Data[:])
	}
	req := &ibmad.Request{Addr: addr}
	_ = v.MarshalTo(req.MAD[:])
	return req
}

// ask: the vendor round trip to the peer's agent by GID with a GRH:
// ClassPortInfo, SourceRoute with the right and a wrong expected port, and
// an ibping-format ping.
func ask(peer ibmad.GID, wait time.Duration) bool {
	e, err := open()
	if err != nil {
		return result("round_trip", false, "open: %v", err)
	}
	defer e.Close()
	ctx := context.Background()
	var resp ibmad.Response
	start := time.Now()
	for {
		err = e.Do(ctx, vendorReq(ibmad.ClassIBTracer, ibmad.OUIOpenIB, ibmad.AttrClassPortInfo, grh(peer), nil), &resp)
		if err == nil || time.Since(start) > wait {
			break
		}
		time.Sleep(time.Second)
	}
	all := result("classportinfo", err == nil && resp.MAD.Status() == ibmad.StatusOK,
		"err=%v status=%s after %v", err, resp.MAD.Status(), time.Since(start).Round(time.Millisecond))
	for _, tc := range []struct {
		check    string
		expected uint8
		want     ibmad.Status
	}{{"sourceroute_right_port", 1, ibmad.StatusOK}, {"sourceroute_wrong_port", 2, ibmad.StatusInvalidField}} {
		sr := ibmad.SourceRoute{HopCount: 1}
		sr.InPort[0] = tc.expected
		err := e.Do(ctx, vendorReq(ibmad.ClassIBTracer, ibmad.OUIOpenIB, ibmad.AttrSourceRoute, grh(peer),
			func(b []byte) { _ = sr.MarshalTo(b) }), &resp)
		var got ibmad.SourceRoute
		if err == nil {
			err = got.UnmarshalBinary(resp.MAD.VendorData())
		}
		all = result(tc.check, err == nil && resp.MAD.Status() == tc.want && got.ActualInPort == 1 && got.IngressKnown(),
			"err=%v status=%s actual_in_port=%d node_guid=%s node=%q", err, resp.MAD.Status(), got.ActualInPort,
			got.NodeGUID, got.NodeDescription.String()) && all
	}
	err = e.Do(ctx, vendorReq(ibmad.ClassOpenIBPing, ibmad.OUIOpenIB, ibmad.AttrPing, grh(peer), nil), &resp)
	host := ""
	if err == nil {
		host = strings.TrimRight(string(resp.MAD.VendorData()), "\x00")
	}
	all = result("ibping", err == nil && resp.MAD.Status() == ibmad.StatusOK && host != "", "err=%v host=%q", err, host) && all
	return all
}

// timeout: a request that reaches the peer but no QP there (QP 5 does not
// exist) gets no answer: the kernel's send timeout, reported as a timeout
// and not as an error of the device. (A request to QP 1 with an OUI
// nobody registered is not one: the peer's MAD layer answers it itself
// with an "unsupported" status; noted as KT INFO.)
func timeout(peer ibmad.GID) bool {
	e, err := open()
	if err != nil {
		return result("timeout", false, "open: %v", err)
	}
	defer e.Close()
	var resp ibmad.Response
	err = e.Do(context.Background(), vendorReq(ibmad.ClassIBTracer, 0x00abcd, ibmad.AttrClassPortInfo, grh(peer), nil), &resp)
	fmt.Printf("KT INFO no_agent_for_oui err=%v status=%s\n", err, resp.MAD.Status())
	addr := grh(peer)
	addr.QPN = 5
	start := time.Now()
	err = e.Do(context.Background(), vendorReq(ibmad.ClassIBTracer, ibmad.OUIOpenIB, ibmad.AttrClassPortInfo, addr, nil), &resp)
	return result("timeout", errors.Is(err, ibmad.ErrTimeout) && e.Err() == nil, "err=%v after %v", err, time.Since(start).Round(time.Millisecond))
}

// refused: on one engine, a request the kernel refuses (LID routing on a
// port that needs a GRH: EINVAL) fails alone with its address; the next
// one, by GID, is answered.
func refused(peer ibmad.GID) bool {
	e, err := open()
	if err != nil {
		return result("refused_then_good", false, "open: %v", err)
	}
	defer e.Close()
	ctx := context.Background()
	bad := vendorReq(ibmad.ClassIBTracer, ibmad.OUIOpenIB, ibmad.AttrClassPortInfo, ibmad.GSIAddress(1, 0), nil)
	err1 := e.Do(ctx, bad, &ibmad.Response{})
	var resp ibmad.Response
	err2 := e.Do(ctx, vendorReq(ibmad.ClassIBTracer, ibmad.OUIOpenIB, ibmad.AttrClassPortInfo, grh(peer), nil), &resp)
	st := e.Stats()
	var sendErrs uint64
	for _, c := range st.Classes {
		sendErrs += c.SendErrors
	}
	return result("refused_then_good",
		errors.Is(err1, ibmad.ErrRequestRefused) && !errors.Is(err1, ibmad.ErrDeviceLost) && strings.Contains(err1.Error(), "lid 1 qp 1") &&
			err2 == nil && resp.MAD.Status() == ibmad.StatusOK && e.Err() == nil && sendErrs == 1,
		"first=%v | second=%v status=%s | send_errors=%d", err1, err2, resp.MAD.Status(), sendErrs)
}

// ping sends our ibping-format request to g and reports what came back
// as KT INFO: infiniband-diags' "ibping -S" receives it, but answers to
// the requester's LID without the GRH (libibmad's mad_respond_via), which
// a RoCE port refuses; the caller checks the server's own log.
func ping(g ibmad.GID, want string) bool {
	e, err := open()
	if err != nil {
		return result("ibping_server", false, "open: %v", err)
	}
	defer e.Close()
	var resp ibmad.Response
	start := time.Now()
	for {
		err = e.Do(context.Background(), vendorReq(ibmad.ClassOpenIBPing, ibmad.OUIOpenIB, ibmad.AttrPing, grh(g), nil), &resp)
		// Until ibping -S has registered, the kernel's MAD core answers
		// "unsupported" itself.
		if (err == nil && resp.MAD.Status() == ibmad.StatusOK) || errors.Is(err, ibmad.ErrTimeout) || time.Since(start) > 10*time.Second {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	host := ""
	if err == nil {
		host = strings.TrimRight(string(resp.MAD.VendorData()), "\x00")
	}
	fmt.Printf("KT INFO ibping_server_answer err=%v status=%s answer=%q (its hostname: %q)\n", err, resp.MAD.Status(), host, want)
	return true
}

// noSMI: a Soft-RoCE port has no QP0, so the kernel refuses the SMP agent
// (EPROTONOSUPPORT). Directed-route SMPs fail with a message that says so,
// the registration is asked once, and the same engine still reaches the
// peer's agent.
func noSMI(peer ibmad.GID) bool {
	e, err := open()
	if err != nil {
		return result("no_qp0", false, "open: %v", err)
	}
	defer e.Close()
	ctx := context.Background()
	smp, err := ibmad.NewDRGet(ibmad.AttrNodeInfo, 0, nil)
	if err != nil {
		return result("no_qp0", false, "%v", err)
	}
	var errs [2]error
	for i := range errs {
		req := &ibmad.Request{Addr: ibmad.DRAddress()}
		_ = smp.MarshalTo(req.MAD[:])
		errs[i] = e.Do(ctx, req, &ibmad.Response{})
	}
	var resp ibmad.Response
	err = e.Do(ctx, vendorReq(ibmad.ClassIBTracer, ibmad.OUIOpenIB, ibmad.AttrClassPortInfo, grh(peer), nil), &resp)
	return result("no_qp0",
		errors.Is(errs[0], ibmad.ErrRequestRefused) && errors.Is(errs[0], syscall.EPROTONOSUPPORT) && strings.Contains(errs[0].Error(), "no QP0") &&
			errors.Is(errs[1], ibmad.ErrRequestRefused) && err == nil && resp.MAD.Status() == ibmad.StatusOK && e.Err() == nil,
		"smp=%v | again=%v | vendor after: err=%v status=%s", errs[0], errs[1], err, resp.MAD.Status())
}
