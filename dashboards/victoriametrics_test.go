package dashboards

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// freeAddr is a free loopback address.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// runBounded starts bin with args in dir, logging to dir/name.log, and
// stops it when the test ends or after 4 minutes; the log is shown if
// the test failed. The channel gives its exit once it has exited.
func runBounded(t *testing.T, dir, name, bin string, args ...string) <-chan error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	done, exited := make(chan struct{}), make(chan error, 1)
	go func() { exited <- cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		cancel()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("%s log (end):\n%s", name, lastLines(string(b), 15))
		}
	})
	return exited
}

// startVictoriaMetrics runs victoria-metrics (single node) on a free
// loopback port with its data in a temporary directory, answering for
// recent samples at once (-search.latencyOffset=0), and returns its
// address once healthy.
func startVictoriaMetrics(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	addr := freeAddr(t)
	runBounded(t, dir, "victoria-metrics", bin, "-storageDataPath="+filepath.Join(dir, "data"), "-httpListenAddr="+addr,
		"-retentionPeriod=1y", "-search.latencyOffset=0s", "-search.disableCache")
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("victoria-metrics not healthy: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// importSeries writes the series, minute m at start + m minutes, in the
// Prometheus text format with timestamps, and makes them searchable.
func importSeries(t *testing.T, addr string, series []evalSeries, start time.Time) {
	t.Helper()
	var b strings.Builder
	for _, s := range series {
		for m, v := range s.values {
			if math.IsNaN(v) {
				continue
			}
			if s.clock {
				v += float64(start.Unix())
			}
			at := start.Add(time.Duration(m) * time.Minute).UnixMilli()
			fmt.Fprintf(&b, "%s %s %d\n", s.name, fmt.Sprint(v), at)
		}
	}
	for _, path := range []string{"/api/v1/import/prometheus", "/internal/force_flush"} {
		resp, err := http.Post("http://"+addr+path, "text/plain", strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s: %s", path, resp.Status)
		}
		b.Reset()
	}
}

// replayRules runs vmalert in replay mode over [from, to]: both rule
// files, read from and written back to the victoria-metrics at addr, one
// evaluation a minute (-datasource.queryStep: 5m in replay otherwise).
// vmalert replays one rule over the whole range, then the next, and a
// rule reads what the rules before it recorded: victoria-metrics makes
// samples searchable a second or more after they arrive, unevenly (2 s
// of -replay.rulesDelay still lost a record once), so vmalert writes
// through flushingProxy, which has them made searchable before it
// answers, and the delay need only cover vmalert's own flush interval.
// Replay mode refuses the query function in templates, so it gets the
// files without their annotations (withoutAnnotations); -dryRun checks
// those (TestRulesLoadInEveryEngine).
func replayRules(t *testing.T, bin, addr string, from, to time.Time) {
	t.Helper()
	dir := t.TempDir()
	args := []string{"-datasource.url=http://" + addr, "-remoteWrite.url=" + flushingProxy(t, addr),
		"-remoteWrite.flushInterval=100ms", "-replay.rulesDelay=500ms", "-replay.disableProgressBar",
		"-evaluationInterval=1m", "-datasource.queryStep=1m", "-httpListenAddr=" + freeAddr(t),
		"-replay.timeFrom=" + from.UTC().Format(time.RFC3339), "-replay.timeTo=" + to.UTC().Format(time.RFC3339)}
	for _, f := range []string{shardRulesFile, rulesFile} {
		args = append(args, "-rule="+withoutAnnotations(t, f, dir))
	}
	began := time.Now()
	if err := <-runBounded(t, dir, "vmalert", bin, args...); err != nil {
		b, _ := os.ReadFile(filepath.Join(dir, "vmalert.log"))
		t.Fatalf("vmalert replay: %v\n%s", err, lastLines(string(b), 15))
	}
	t.Logf("vmalert replayed %v of rules in %v", to.Sub(from), time.Since(began).Round(time.Second))
	resp, err := http.Post("http://"+addr+"/internal/force_flush", "text/plain", nil)
	if err == nil {
		resp.Body.Close()
	}
}

// vmQuery runs query at the time at, and returns its series as
// "alertname" or "alertname/dest", sorted.
func vmQuery(addr, query string, at time.Time) ([]string, error) {
	v := url.Values{"query": {query}, "time": {fmt.Sprint(at.Unix())}}
	resp, err := http.Get("http://" + addr + "/api/v1/query?" + v.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		return nil, fmt.Errorf("%s: %v (status %q)", query, err, r.Status)
	}
	var out []string
	for _, s := range r.Data.Result {
		k := s.Metric["alertname"]
		if d := s.Metric["dest"]; d != "" {
			k += "/" + d
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// withoutAnnotations writes the rule file f into dir without its rules'
// annotations, and returns the copy's path.
func withoutAnnotations(t *testing.T, f, dir string) string {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, g := range mappingValue(doc.Content[0], "groups").Content {
		for _, r := range mappingValue(g, "rules").Content {
			for i := 0; i+1 < len(r.Content); i += 2 {
				if r.Content[i].Value == "annotations" {
					r.Content = append(r.Content[:i], r.Content[i+2:]...)
					break
				}
			}
		}
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, f)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// mappingValue is the value of key in the YAML mapping m (an empty node
// if there is none).
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return &yaml.Node{}
}

// flushingProxy passes requests on to the victoria-metrics at addr, and
// after a remote write asks it to make what it received searchable
// (/internal/force_flush) before answering; it returns its URL.
func flushingProxy(t *testing.T, addr string) string {
	t.Helper()
	target := &url.URL{Scheme: "http", Host: addr}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.URL.Path != "/api/v1/write" {
			return nil
		}
		r, err := http.Get("http://" + addr + "/internal/force_flush")
		if err != nil {
			return err
		}
		r.Body.Close()
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv.URL
}

// firingMinutes lists, per alert, the minutes of the scenario at which
// vmalert wrote it firing (its ALERTS samples), as "name: from-to ...".
func firingMinutes(t *testing.T, addr string, start time.Time) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/export?" + url.Values{"match[]": {`ALERTS{alertstate="firing"}`}}.Encode())
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var out []string
	dec := json.NewDecoder(resp.Body)
	for dec.More() {
		var s struct {
			Metric     map[string]string `json:"metric"`
			Timestamps []int64           `json:"timestamps"`
		}
		if err := dec.Decode(&s); err != nil {
			return err.Error()
		}
		var runs []string
		first, last := -2, -2
		flush := func() {
			if first >= 0 {
				runs = append(runs, fmt.Sprintf("%d-%d", first, last))
			}
		}
		for _, ts := range s.Timestamps {
			m := int((ts - start.UnixMilli()) / 60000)
			if m != last+1 {
				flush()
				first = m
			}
			last = m
		}
		flush()
		name := s.Metric["alertname"]
		if d := s.Metric["dest"]; d != "" {
			name += "/" + d
		}
		out = append(out, name+": "+strings.Join(runs, " "))
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}
