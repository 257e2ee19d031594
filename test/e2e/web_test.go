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

// TestTLSAndBasicAuth: --web.config.file with a certificate the test makes.
func TestTLSAndBasicAuth(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	hash, _ := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	webCfg := filepath.Join(dir, "web.yml")
	_ = os.WriteFile(webCfg, []byte(fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  prom: %s\n",
		certFile, keyFile, hash)), 0o600)
	p := startExporter(t, nil, "interval: 1s\n", "--ib.transport=sim", "--web.config.file="+webCfg)
	pool := x509.NewCertPool()
	cert, _ := x509.ParseCertificate(der)
	pool.AddCert(cert)
	p.client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
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
