package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/coreos/go-systemd/v22/activation"
	"github.com/mdlayher/vsock"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/ibtracer/ibtracer_exporter/internal/webserve"
)

// serve listens where web.ListenAndServe would (systemd's sockets with
// --web.systemd-socket, else each --web.listen-address, vsock:// ones on
// vsock), wraps every listener in lim (nil: no limit), and serves srv on
// them with the toolkit (TLS and basic auth from --web.config.file).
func serve(srv *http.Server, fc *web.FlagConfig, lim *webserve.ConnLimiter, slogger *slog.Logger) error {
	lns, err := listeners(fc, slogger)
	if err != nil {
		return err
	}
	for i, ln := range lns {
		defer ln.Close()
		if lim != nil {
			lns[i] = lim.Listen(ln)
		}
	}
	if lim != nil {
		srv.ConnState = lim.ConnState
	}
	return web.ServeMultiple(lns, srv, fc, slogger)
}

func listeners(fc *web.FlagConfig, slogger *slog.Logger) ([]net.Listener, error) {
	if fc.WebSystemdSocket != nil && *fc.WebSystemdSocket {
		slogger.Info("Listening on systemd activated listeners instead of port listeners.")
		lns, err := activation.Listeners()
		if err != nil {
			return nil, fmt.Errorf("systemd sockets: %w", err)
		}
		if len(lns) == 0 {
			return nil, errors.New("no socket activation file descriptors found")
		}
		return lns, nil
	}
	if fc.WebListenAddresses == nil || len(*fc.WebListenAddresses) == 0 {
		return nil, web.ErrNoListeners
	}
	var lns []net.Listener
	for _, addr := range *fc.WebListenAddresses {
		ln, err := listen(addr)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, err
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// listen opens one --web.listen-address: vsock://:PORT on vsock, else TCP.
func listen(addr string) (net.Listener, error) {
	if !strings.HasPrefix(addr, "vsock://") {
		return net.Listen("tcp", addr)
	}
	u, err := url.Parse(addr)
	if err != nil {
		return nil, fmt.Errorf("--web.listen-address %q: %w", addr, err)
	}
	_, p, err := net.SplitHostPort(u.Host)
	if err != nil {
		return nil, fmt.Errorf("--web.listen-address %q: %w", addr, err)
	}
	port, err := strconv.ParseUint(p, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("--web.listen-address %q: port: %w", addr, err)
	}
	return vsock.Listen(uint32(port), nil)
}
