package dashboards

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
)

const amFile = "alertmanager.example.yml"

// A link, a node and a destination, as the rules' alerts label them.
var (
	linkA = map[string]string{"node_guid": "0x0000000000200001", "port": "3", "remote_node_guid": "0x0000000000200005", "remote_port": "1"}
	linkB = map[string]string{"node_guid": "0x0000000000200002", "port": "4", "remote_node_guid": "0x0000000000200006", "remote_port": "2"}
	nodeA = map[string]string{"node_guid": "0x0000000000100030", "port_guid": "0x0000000000100031", "node_name": "host3"}
)

func alertLabels(name, severity string, thing map[string]string) map[string]string {
	l := map[string]string{"alertname": name, "severity": severity}
	for k, v := range thing {
		l[k] = v
	}
	return l
}

// routeCases: each alert of the rules, labelled as the rules label it,
// and the receiver the example routes it to.
var routeCases = []struct {
	labels   map[string]string
	receiver string
}{
	{alertLabels("IBTracerPortMismatch", "critical", map[string]string{"node_guid": "0x0000000000200003", "node_desc": "spine3"}), "fabric-oncall"},
	{alertLabels("IBTracerPortMismatch", "critical", map[string]string{"dest": "db"}), "fabric-oncall"},
	{alertLabels("IBTracerLinkDegraded", "warning", linkA), "fabric-team"},
	{alertLabels("IBTracerLinkErrorsRising", "warning", linkA), "fabric-team"},
	{alertLabels("IBTracerLinkCongested", "warning", linkA), "fabric-team"},
	{alertLabels("IBTracerLinkBERHigh", "warning", linkA), "fabric-team"},
	{alertLabels("IBTracerLinkBERCritical", "critical", linkA), "fabric-oncall"},
	{alertLabels("IBTracerLinkFECUncorrectable", "warning", linkA), "fabric-team"},
	{alertLabels("IBTracerLinkSuspected", "warning", linkA), "fabric-team"},
	{alertLabels("IBTracerLinkNotAsPlanned", "warning", linkA), "fabric-team"},
	{alertLabels("IBTracerNodeDown", "warning", nodeA), "node-team"},
	{alertLabels("IBTracerAgentMissing", "warning", map[string]string{"node_guid": "0x0000000000200002", "node_desc": "sw2"}), "node-team"},
	{alertLabels("IBTracerExporterDown", "warning", map[string]string{"instance": "n3:9684", "job": "ibtracer"}), "node-team"},
	{alertLabels("IBTracerDeviceDown", "warning", map[string]string{"instance": "n3:9684", "job": "ibtracer"}), "node-team"},
	{alertLabels("IBTracerTracesStale", "warning", map[string]string{"instance": "n3:9684", "job": "ibtracer"}), "node-team"},
	{alertLabels("IBTracerScrapeErrors", "warning", map[string]string{"instance": "n3:9684", "job": "ibtracer"}), "node-team"},
	{alertLabels("IBTracerDestinationUnreachable", "warning", map[string]string{"dest": "db"}), "fabric-team"},
	{alertLabels("IBTracerPathRateDropped", "warning", map[string]string{"dest": "db"}), "fabric-team"},
	{alertLabels("IBTracerLatencyHigh", "warning", map[string]string{"dest": "db"}), "fabric-team"},
	{alertLabels("IBTracerPathChanged", "warning", linkA), "fabric-team"},
	{alertLabels("IBTracerLinksDown", "warning", map[string]string{"node_guid": "0x0000000000200005"}), "fabric-team"},
}

// TestAlertmanagerExample: amtool accepts the example, and routes every
// alert of the rules (each one has a case here) to its receiver
// (amtool config routes test --verify.receivers).
func TestAlertmanagerExample(t *testing.T) {
	amtool := promtest.RequireTool(t, "amtool", "prometheus-alertmanager")
	if out, err := exec.Command(amtool, "check-config", amFile).CombinedOutput(); err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Fatalf("amtool check-config: %v\n%s", err, out)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	readYAML(t, rulesFile, &rules)
	tested := map[string]bool{}
	for _, c := range routeCases {
		tested[c.labels["alertname"]] = true
		args := []string{"config", "routes", "test", "--config.file=" + amFile, "--verify.receivers=" + c.receiver}
		keys := make([]string, 0, len(c.labels))
		for k := range c.labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			args = append(args, k+"="+c.labels[k])
		}
		out, err := exec.Command(amtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("amtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" && !tested[r.Alert] {
				t.Errorf("%s has no routing case in routeCases", r.Alert)
			}
		}
	}
}

// TestAlertmanagerInhibition: a real Alertmanager with the example
// configuration, sent a degraded link that is also suspected, another
// suspected link that is down (IBTracerPathChanged), a node down with its
// agent missing, a destination that is unreachable, a link at a critical
// bit error rate with its warning and rising errors, and another link's
// warning, leaves the suspected degraded link, the suspected link that is
// down, the missing agent and the critical link's warnings inhibited, and
// only them.
func TestAlertmanagerInhibition(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Alertmanager: skipped with -short")
	}
	am := promtest.RequireTool(t, "prometheus-alertmanager", "prometheus-alertmanager")
	cfg, err := filepath.Abs(amFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, am, "--config.file="+cfg, "--storage.path="+filepath.Join(dir, "am"),
		"--web.listen-address="+addr, "--cluster.listen-address=")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("alertmanager log:\n%s", log.String())
		}
	}()
	type alert struct {
		Labels map[string]string `json:"labels"`
		Status struct {
			InhibitedBy []string `json:"inhibitedBy"`
		} `json:"status"`
	}
	sent := []alert{
		{Labels: alertLabels("IBTracerLinkDegraded", "warning", linkA)},
		{Labels: alertLabels("IBTracerLinkSuspected", "warning", linkA)},
		{Labels: alertLabels("IBTracerLinkSuspected", "warning", linkB)},
		{Labels: alertLabels("IBTracerNodeDown", "warning", nodeA)},
		{Labels: alertLabels("IBTracerAgentMissing", "warning", map[string]string{"node_guid": nodeA["node_guid"], "node_desc": "host3"})},
		{Labels: alertLabels("IBTracerPathChanged", "warning", linkB)},
		{Labels: alertLabels("IBTracerDestinationUnreachable", "warning", map[string]string{"dest": "db"})},
		{Labels: alertLabels("IBTracerLinkBERCritical", "critical", linkB)},
		{Labels: alertLabels("IBTracerLinkBERHigh", "warning", linkB)},
		{Labels: alertLabels("IBTracerLinkErrorsRising", "warning", linkB)},
		{Labels: alertLabels("IBTracerLinkBERHigh", "warning", linkA)},
	}
	// The critical bit error rate pages alone for its link: its warning
	// and the rising errors of the same link are inhibited; another
	// link's warning is not. Link B is down (IBTracerPathChanged): its
	// suspicion is inhibited, the path change is not.
	wantInhibited := map[int]bool{1: true, 2: true, 4: true, 8: true, 9: true}
	body, _ := json.Marshal(sent)
	key := func(l map[string]string) string {
		return fmt.Sprintf("%s/%s/%s/%s", l["alertname"], l["node_guid"], l["port"], l["dest"])
	}
	asWanted := func(got []alert) bool {
		inh := map[string]bool{}
		for _, a := range got {
			inh[key(a.Labels)] = len(a.Status.InhibitedBy) > 0
		}
		for i, a := range sent {
			if inh[key(a.Labels)] != wantInhibited[i] {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(60 * time.Second)
	var got []alert
	for {
		resp, err := http.Post("http://"+addr+"/api/v2/alerts", "application/json", bytes.NewReader(body))
		if err == nil {
			resp.Body.Close()
			if resp, err = http.Get("http://" + addr + "/api/v2/alerts"); err == nil {
				got = nil
				err = json.NewDecoder(resp.Body).Decode(&got)
				resp.Body.Close()
				// Alertmanager marks an alert inhibited as it processes the
				// batch: wait until the marks are what they should be.
				if err == nil && len(got) == len(sent) && asWanted(got) {
					break
				}
			}
		}
		if time.Now().After(deadline) {
			if len(got) != len(sent) {
				t.Fatalf("Alertmanager at %s did not list the %d alerts sent: %v %v", addr, len(sent), err, got)
			}
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !asWanted(got) {
		t.Logf("Alertmanager's inhibitions were not as wanted within the deadline")
	}
	inhibited := map[string]bool{}
	for _, a := range got {
		inhibited[key(a.Labels)] = len(a.Status.InhibitedBy) > 0
	}
	for i, a := range sent {
		if inhibited[key(a.Labels)] != wantInhibited[i] {
			t.Errorf("%s: inhibited %v, want %v", key(a.Labels), inhibited[key(a.Labels)], wantInhibited[i])
		}
	}
}
