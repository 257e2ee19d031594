#!/usr/bin/env bash
# Starts ibtracer_exporter on the built-in simulated fabric with the demo
# configuration and its chaos schedule (as make run does, on a free
# loopback port), waits until /traces shows a mismatch and a previous
# path (a path change), or WAIT seconds,
# renders / and /traces with headless Debian chromium, and prints what the
# browser shows: the text of each rendered page and a summary of its
# tables. Needs chromium (apt-get install chromium). Everything lives in a
# temporary directory removed on exit.
#
#   scripts/render-pages.sh            # text of / and /traces
#   WAIT=120 SCREENSHOT=1 scripts/render-pages.sh
set -euo pipefail
cd "$(dirname "$0")/.."
WAIT=${WAIT:-150}
CHROMIUM=${CHROMIUM:-chromium}
command -v "$CHROMIUM" >/dev/null || { echo "render-pages: $CHROMIUM not found (apt-get install chromium)" >&2; exit 1; }

tmp=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/ibtracer_exporter" .
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
"$tmp/ibtracer_exporter" --ib.transport=sim --sim.agents=80% --sim.faults --config.file=examples/demo.yml \
	--web.listen-address="127.0.0.1:$port" >"$tmp/exporter.log" 2>&1 &
pid=$!

# Wait for a mismatch and a path change (the chaos schedule's first
# fault, a divergence, comes within 20s; the second, a link down, 20-40s
# later).
deadline=$((SECONDS + WAIT))
until curl -fsS "$base/traces" 2>/dev/null >"$tmp/traces.json" && grep -q '"agent_status": "mismatch"' "$tmp/traces.json" &&
	grep -q '"previous_path"' "$tmp/traces.json"; do
	if [ $SECONDS -ge $deadline ]; then echo "render-pages: no mismatch and path change within ${WAIT}s; rendering anyway" >&2; break; fi
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/exporter.log" >&2; exit 1; }
	sleep 2
done

render() { # render PATH OUT: the DOM chromium builds for PATH
	"$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
		--disable-sync --no-first-run --user-data-dir="$(mktemp -d -p "$tmp")" --dump-dom "$base$1" 2>/dev/null >"$2"
	if [ -n "${SCREENSHOT:-}" ]; then
		"$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
			--disable-sync --no-first-run --user-data-dir="$(mktemp -d -p "$tmp")" --window-size=1400,2000 \
			--screenshot="${2%.html}.png" "$base$1" 2>/dev/null || true
		cp "${2%.html}.png" "./$(basename "${2%.html}").png"
	fi
}
render / "$tmp/landing.html"
render /traces "$tmp/traces.html"

# describe FILE: the rendered DOM as text, tables row by row, hops as boxes.
describe() {
	python3 - "$1" <<'PY'
import sys
from html.parser import HTMLParser

class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.out, self.cell, self.row, self.stack, self.skip = [], None, None, [], 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("style", "script", "title"): self.skip += 1
        if tag == "tr": self.row = []
        if tag in ("td", "th"): self.cell = [a.get("class", "")]
        if tag in ("h1", "h2", "h3", "p", "li"): self.stack.append([tag])
        if tag == "a" and self.stack: self.stack[-1].append(" [link %s] " % a.get("href"))
    def handle_endtag(self, tag):
        if tag in ("style", "script", "title"): self.skip -= 1
        if tag in ("td", "th") and self.cell is not None and self.row is not None:
            cls, txt = self.cell[0], " ".join(" ".join(self.cell[1:]).split())
            if txt != "→": self.row.append(("{%s} " % cls if cls.startswith("hop") else "") + txt)
            self.cell = None
        if tag == "tr" and self.row is not None:
            self.out.append("  | " + " | ".join(self.row)); self.row = None
        if tag in ("h1", "h2", "h3", "p", "li") and self.stack:
            t = self.stack.pop(); txt = " ".join("".join(t[1:]).split())
            if txt: self.out.append({"h1": "# ", "h2": "## ", "h3": "### "}.get(tag, "") + txt)
    def handle_data(self, d):
        if self.skip: return
        if self.cell is not None: self.cell.append(d)
        elif self.stack: self.stack[-1].append(d)

p = P(); p.feed(open(sys.argv[1]).read()); print("\n".join(p.out))
PY
}
echo "== / (landing page) as chromium renders it"
describe "$tmp/landing.html"
echo
echo "== /traces (Accept: text/html, as chromium asks) as chromium renders it"
describe "$tmp/traces.html"
echo
echo "== /traces with curl (Accept: */*): $(curl -fsS -o /dev/null -w '%{content_type}' "$base/traces")"
echo "== exporter log lines about state and path changes, chaos faults"
grep -E 'destination (failing|recovered|failure changed)|path changed|sim fault' "$tmp/exporter.log" | head -30 || true
echo "== toolkit lines (one ts, one caller each)"
grep -E 'tls_config' "$tmp/exporter.log" || true
