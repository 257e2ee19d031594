package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestReload: a bad file keeps the old configuration, sets the reload
// gauge to 0 and logs file:line; a good one adds and removes destinations.
func TestReload(t *testing.T) {
	skipShort(t)
	p := startExporter(t, nil, "interval: 1s\ndestinations:\n  - {name: one, node: H1-1}\n  - {name: two, lid: 9}\n", "--ib.transport=sim")
	p.waitFor(20*time.Second, "first traces", allTraced("one", "two"))
	p.writeConfig("interval: 1s\ndestinations:\n  - {name: one, node: H1-1}\n  - {name: three, lid: 50000}\n")
	code, msg := p.post("/-/reload")
	if code != 500 || !strings.Contains(msg, "ibtracer.yml:4: destinations[1] (three).lid") {
		t.Fatalf("bad reload: %d %s", code, msg)
	}
	b := p.waitFor(5*time.Second, "reload gauge 0", func(b string) bool {
		v, ok := value(b, "ibtracer_config_last_reload_successful")
		return ok && v == 0
	})
	if _, ok := value(b, `ibtracer_trace_success{dest="two"}`); !ok {
		t.Fatal("the old configuration was not kept")
	}
	if !strings.Contains(p.Logs(), "configuration reload failed; keeping the old configuration") ||
		!strings.Contains(p.Logs(), "ibtracer.yml:4: destinations[1] (three).lid") {
		t.Fatalf("log does not name the line:\n%s", p.Logs())
	}
	if code, _ := p.get("/-/reload"); code != http.StatusMethodNotAllowed {
		t.Fatalf("GET /-/reload: %d", code)
	}
	p.writeConfig("interval: 1s\ndestinations:\n  - {name: one, node: H1-1}\n  - {name: three, lid: 10}\n")
	// SIGHUP this time.
	p.sighup()
	p.waitFor(20*time.Second, "the new destination traced and the old one gone", func(b string) bool {
		v, _ := value(b, "ibtracer_config_last_reload_successful")
		_, two := value(b, `ibtracer_trace_success{dest="two"}`)
		return v == 1 && !two && allTraced("three")(b)
	})
}
