package collector

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// chromium renders url with headless Debian chromium and returns the DOM
// it built; with shot set it also writes a screenshot there. Each run has
// its own profile directory and a time limit.
func chromium(t *testing.T, bin, url, shot string) string {
	t.Helper()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir()}
	run := func(extra ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(append(append([]string{}, args...), extra...), url)...)
		cmd.Dir = t.TempDir()
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium %v %s: %v", extra, url, err)
		}
		return out
	}
	dom := string(run("--dump-dom"))
	if shot != "" {
		run("--window-size=1920,1080", "--screenshot="+shot)
		if _, err := os.Stat(shot); err != nil {
			t.Fatalf("no screenshot of %s: %v", url, err)
		}
	}
	return dom
}

// TestPagesInChromium renders the landing page and /traces (a failed
// trace, a filter) in headless chromium and checks what it built: the
// health counts, the suspected and unhealthy links by name, the break
// and the last good path side by side, the filter and the crossing
// outlined. IBTRACER_SCREENSHOTS=DIR keeps the screenshots there (for a
// person to look at); otherwise they go with the test's temp directory.
func TestPagesInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts chromium")
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (scripts/deps.sh installs it)")
	}
	dir := os.Getenv("IBTRACER_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	e := healthPagesExporter(t)
	srv := httptest.NewServer(servedMux(e)) // 127.0.0.1, a free port
	defer srv.Close()
	for _, c := range []struct {
		page, shot string
		want       []string
	}{
		{"/", "landing.png", []string{
			"Destinations (1 of 5 ok, 1 on an unhealthy path, 2 failing, 1 not traced yet)",
			`leaf-a-site {0x0000000000000020}[6] — "gone01 HCA-1" {0x0000000000000050}[1]`,
			`leaf-b {0x0000000000000021}[7] → "db01 HCA-1" {0x0000000000000030}[1] | width_degraded`,
			"slow | lid 13 | ok | unhealthy: 1 degraded link(s)",
			`me {0x0000000000000010}[1] — leaf-b {0x0000000000000021}[1] | 1 | 1 | 0.50 | ok |`,
		}},
		{"/traces?destination=gone&destination=db01", "traces-failed.png", []string{
			"Latest trace", "broke here stopped after hop 1, leaving by port 6 unreachable (timeout)", "Path health: ok as far as traced (1 link(s))",
			"Last good path", "→ ✗ width_degraded",
		}},
		{"/traces?link=leaf-a-site:6", "traces-filtered.png", []string{
			"Filtered: destinations whose path crosses the link at leaf-a-site {0x0000000000000020}:6",
		}},
	} {
		dom := chromium(t, bin, srv.URL+c.page, filepath.Join(dir, c.shot))
		doc, err := html.Parse(strings.NewReader(dom))
		if err != nil {
			t.Fatal(err)
		}
		// The text, then each table row's cells joined by " | "
		// (chromium's DOM has no space between cells).
		all := text(doc) + "\n" + strings.Join(cells(doc, "status"), "\n") + "\n" + strings.Join(cells(doc, "path"), "\n")
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s as chromium renders it: no %q in\n%s", c.page, w, all)
			}
		}
		cross := 0
		visit(doc, func(n *html.Node) {
			if strings.Contains(" "+attr(n, "class")+" ", " cross ") {
				cross++
			}
		})
		if strings.Contains(c.page, "link=") != (cross > 0) {
			t.Errorf("%s: %d outlined cells", c.page, cross)
		}
		t.Logf("%s: %d bytes of DOM, screenshot %s", c.page, len(dom), filepath.Join(dir, c.shot))
	}
}
