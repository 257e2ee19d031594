package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/exporter-toolkit/web"
)

// The listeners are those web.ListenAndServe would open: one per
// --web.listen-address; a vsock:// address that does not parse is an
// error naming it.
func TestListeners(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	no := false
	addrs := []string{"127.0.0.1:0", "127.0.0.1:0"}
	lns, err := listeners(&web.FlagConfig{WebListenAddresses: &addrs, WebSystemdSocket: &no}, quiet)
	if err != nil || len(lns) != 2 {
		t.Fatalf("%d listeners, %v; want 2", len(lns), err)
	}
	for _, ln := range lns {
		if !strings.HasPrefix(ln.Addr().String(), "127.0.0.1:") {
			t.Errorf("listening on %s", ln.Addr())
		}
		ln.Close()
	}
	bad := []string{"127.0.0.1:0", "vsock://:notaport"}
	if _, err := listeners(&web.FlagConfig{WebListenAddresses: &bad, WebSystemdSocket: &no}, quiet); err == nil ||
		!strings.Contains(err.Error(), `--web.listen-address "vsock://:notaport"`) {
		t.Errorf("bad vsock address: %v", err)
	}
	none := []string{}
	if _, err := listeners(&web.FlagConfig{WebListenAddresses: &none, WebSystemdSocket: &no}, quiet); err != web.ErrNoListeners {
		t.Errorf("no address: %v, want %v", err, web.ErrNoListeners)
	}
}
