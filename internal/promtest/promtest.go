package promtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"testing"
	"time"
)

// RequireTool returns the path of the program name, from Debian package
// pkg. Without it the test is skipped, or fails under CI=true. Under
// -short it is always skipped: go test -short starts no external peer.
func RequireTool(t testing.TB, name, pkg string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("real-peer test (%s): skipped under -short", name)
	}
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing: apt-get install %s", name, pkg)
		}
		t.Skipf("%s is missing (Debian %s)", name, pkg)
	}
	return p
}

// Query runs the instant query expr on the Prometheus at addr (host:port)
// and returns how many series it returned. A query Prometheus refuses is
// an error carrying Prometheus's message.
func Query(addr, expr string) (int, error) { return QueryWithin(addr, expr, 0) }

// QueryWithin is Query with a bound on the whole request (0: none).
func QueryWithin(addr, expr string, timeout time.Duration) (int, error) {
	c := &http.Client{Timeout: timeout}
	resp, err := c.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, err
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("%s", r.Error)
	}
	return len(r.Data.Result), nil
}
