package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// tlsAuthFiles writes a certificate, its key and a web configuration with
// TLS and basic auth (user prom, password s3cret) into dir.
func tlsAuthFiles(t *testing.T, dir string) (webCfg, certFile, keyFile string, der []byte) {
	t.Helper()
	var err error
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err = x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	hash, _ := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	webCfg = filepath.Join(dir, "web.yml")
	_ = os.WriteFile(webCfg, []byte(fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  prom: %s\n",
		certFile, keyFile, hash)), 0o600)
	return webCfg, certFile, keyFile, der
}

// tlsClient trusts the certificate der.
func tlsClient(der []byte) *http.Client {
	pool := x509.NewCertPool()
	cert, _ := x509.ParseCertificate(der)
	pool.AddCert(cert)
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// TestTLSAndBasicAuth: --web.config.file with a certificate the test makes.
func TestTLSAndBasicAuth(t *testing.T) {
	skipShort(t)
	webCfg, _, _, der := tlsAuthFiles(t, t.TempDir())
	p := startExporter(t, nil, "interval: 1s\n", "--ib.transport=sim", "--web.config.file="+webCfg)
	p.client = tlsClient(der)
	p.scheme = "https"
	var code int
	poll(10*time.Second, 100*time.Millisecond, func() bool { code, _ = p.get("/metrics"); return code != 0 })
	if code != http.StatusUnauthorized {
		t.Fatalf("without credentials: %d, want 401", code)
	}
	p.user, p.pass = "prom", "wrong"
	if code, _ = p.get("/metrics"); code != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d", code)
	}
	p.pass = "s3cret"
	code, body := p.get("/metrics")
	if code != 200 || !strings.Contains(body, "ibtracer_device_up 1") {
		t.Fatalf("with credentials over TLS: %d", code)
	}
	plain := &http.Client{Timeout: 2 * time.Second}
	if resp, err := plain.Get("http://" + p.addr + "/metrics"); err == nil && resp.StatusCode == 200 {
		t.Fatal("plain HTTP served metrics")
	}
}

// TestWebConfigSwappedForDevZero: the web configuration, then the
// certificate it names, swapped for /dev/zero under a running exporter
// (TLS and basic auth): the exporter stays alive and under 200 MB through
// requests and handshakes, the last good configuration stays in force
// (401 without the password, 200 with it), the refusal is counted and
// logged once. The toolkit read the swapped file whole on every request
// and handshake: the first request grew the exporter by about 250 MB a
// second, without end.
func TestWebConfigSwappedForDevZero(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	webCfg, certFile, _, der := tlsAuthFiles(t, dir)
	p := startExporter(t, nil, "interval: 1s\n", "--ib.transport=sim", "--web.config.file="+webCfg)
	p.client, p.scheme = tlsClient(der), "https"
	poll(10*time.Second, 100*time.Millisecond, func() bool { code, _ := p.get("/-/healthy"); return code != 0 })
	refused := 0.0
	for _, swapped := range []string{webCfg, certFile} {
		good, err := os.ReadFile(swapped)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(swapped); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/dev/zero", swapped); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second) // more than the poll (webconfig.go)
		p.user, p.pass = "", ""
		for i := 0; i < 5; i++ { // new connections: handshakes too
			p.client.CloseIdleConnections()
			code, _ := rssBounded(t, p, func() (int, string) { return p.get("/-/healthy") })
			if code != http.StatusUnauthorized {
				t.Fatalf("%s swapped: without credentials %d, want 401 (the last good configuration)", filepath.Base(swapped), code)
			}
		}
		p.user, p.pass = "prom", "s3cret"
		if code, _ := rssBounded(t, p, func() (int, string) { return p.get("/metrics") }); code != 200 {
			t.Fatalf("%s swapped: with credentials %d, want 200", filepath.Base(swapped), code)
		}
		refused++
		p.waitFor(5*time.Second, "the refusal counted", func(b string) bool {
			v, ok := value(b, "ibtracer_web_config_refused_total")
			return ok && v == refused
		})
		// Put back, the file is taken again.
		if err := os.Remove(swapped); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(swapped, good, 0o600); err != nil {
			t.Fatal(err)
		}
		p.waitFor(10*time.Second, "the good file taken again", func(string) bool {
			return strings.Count(p.Logs(), "web configuration changed and accepted again") == int(refused)
		})
	}
	if n := strings.Count(p.Logs(), "web configuration change refused"); n != 2 {
		t.Fatalf("%d log lines for the two refused changes, want 2:\n%s", n, p.Logs())
	}
}

// rssBounded runs req while watching the exporter's resident memory, and
// fails the test (the process is killed by the cleanup) once it passes
// 200 MB.
func rssBounded(t *testing.T, p *exporterProc, req func() (int, string)) (int, string) {
	t.Helper()
	type answer struct {
		code int
		body string
	}
	done := make(chan answer, 1)
	go func() { c, b := req(); done <- answer{c, b} }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if rss := rssOf(p.cmd.Process.Pid); rss > 200<<20 {
			t.Fatalf("exporter RSS %d MB during a request, want under 200 MB", rss>>20)
		}
		select {
		case a := <-done:
			return a.code, a.body
		case <-tick.C:
		}
	}
}

// rssOf is pid's resident set in bytes (0 when unknown).
func rssOf(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			var kb int64
			fmt.Sscan(f[1], &kb)
			return kb << 10
		}
	}
	return 0
}
