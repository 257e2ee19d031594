package e2e

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var portGUIDRe = regexp.MustCompile(`(?m)^PortGuid:\.*(0x[0-9a-f]+)$`)

// TestRunbookLinkCommands runs the commands docs/runbook.md gives to
// look at a link the alerts name by node GUID and port, with the stock
// infiniband-diags on ibsim and OpenSM, on the link sw1 port 2 - host3
// port 1 (a switch end and a CA end):
//   - `iblinkinfo -S <node_guid>` takes a port GUID: for a CA's node GUID
//     it prints nothing of the CA (why the runbook does not use it so);
//   - `iblinkinfo -l --switches-only | grep -E '^<switch_guid> +"[^"]*" +[0-9]+ +<port>\['`
//     is the link from its switch end, naming the far end;
//   - `ibnetdiscover -p | grep -E '^SW +[0-9]+ +<port> +<switch_guid> '`
//     gives the far end's LID and port GUID;
//   - `iblinkinfo -G <port_guid>` with that GUID prints the CA's port.
func TestRunbookLinkCommands(t *testing.T) {
	skipShort(t)
	fab, lids := startTwoSwitch(t)
	info := func(lid uint16) (node, port string) {
		out, err := fab.Tool("host1", "smpquery", "nodeinfo", strconv.Itoa(int(lid)))
		n, p := nodeGUIDRe.FindStringSubmatch(out), portGUIDRe.FindStringSubmatch(out)
		if err != nil || n == nil || p == nil {
			t.Fatalf("smpquery nodeinfo %d: %v\n%s", lid, err, out)
		}
		return n[1], p[1]
	}
	sw, _ := info(lids["sw1"])
	caNode, caPort := info(lids["host3"])
	if caNode == caPort {
		t.Fatalf("host3's node and port GUID are both %s: the test cannot tell them apart", caNode)
	}

	out, err := fab.Tool("host1", "iblinkinfo", "-S", caNode)
	if err != nil || strings.Contains(out, "host3") {
		t.Fatalf("iblinkinfo -S <CA node GUID> %s: %v, want nothing of host3:\n%s", caNode, err, out)
	}

	out, err = fab.Tool("host1", "iblinkinfo", "-l", "--switches-only")
	if err != nil {
		t.Fatal(err)
	}
	line := grepE(t, out, fmt.Sprintf(`^%s +"[^"]*" +[0-9]+ +%d\[`, sw, 2))
	if len(line) != 1 || !strings.Contains(line[0], `"host3"`) || !strings.Contains(line[0], "Active/  LinkUp") || !strings.Contains(line[0], caPort) {
		t.Fatalf("iblinkinfo -l --switches-only, sw1 port 2: %q, want one line to host3 (port GUID %s), active:\n%s", line, caPort, out)
	}

	out, err = fab.Tool("host1", "ibnetdiscover", "-p")
	if err != nil {
		t.Fatal(err)
	}
	line = grepE(t, out, fmt.Sprintf(`^SW +[0-9]+ +%d +%s `, 2, sw))
	want := fmt.Sprintf("CA %6d  1 %s", lids["host3"], caPort)
	if len(line) != 1 || !strings.Contains(strings.Join(strings.Fields(line[0]), " "), strings.Join(strings.Fields(want), " ")) {
		t.Fatalf("ibnetdiscover -p, sw1 port 2: %q, want the far end %q:\n%s", line, want, out)
	}

	out, err = fab.Tool("host1", "iblinkinfo", "-G", caPort)
	if err != nil || !strings.Contains(out, "CA: host3:") || !strings.Contains(out, caPort) {
		t.Fatalf("iblinkinfo -G <CA port GUID> %s: %v, want host3's port:\n%s", caPort, err, out)
	}
}

// grepE is the lines of out that `grep -E expr` selects (grep itself,
// so that the runbook's pattern is checked as a shell would run it).
func grepE(t *testing.T, out, expr string) []string {
	t.Helper()
	cmd := exec.Command("grep", "-E", expr)
	cmd.Stdin = strings.NewReader(out)
	b, err := cmd.Output()
	if err != nil && cmd.ProcessState.ExitCode() != 1 { // 1: no line selected
		t.Fatalf("grep -E %q: %v", expr, err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}
