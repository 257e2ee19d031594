package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ibtracer/ibtracer_exporter/internal/readlimit"
)

// The checked copy names no file for the toolkit to read: the files the
// original names (relative to the original, as the toolkit takes them)
// are inline. A change is taken at the next check; a change to a file
// that is not regular (/dev/zero) or over the bound keeps the last good
// copy, is counted once and not read again until it changes.
func TestWebConfigCopy(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeWebConfig(t, dir, 0o600)
	w, err := newWebConfigCopy(filepath.Join(dir, "web.yml"), log.NewNopLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	copyText := func() string {
		b, err := os.ReadFile(w.Path())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if c := copyText(); strings.Contains(c, "_file") || !strings.Contains(c, "client_ca: |") || !strings.Contains(c, "BEGIN EC PRIVATE KEY") || !strings.Contains(c, "a CA file's content") {
		t.Fatalf("copy:\n%s", c)
	}
	write("ca.pem", "another CA\n")
	w.check()
	if c := copyText(); !strings.Contains(c, "another CA") {
		t.Fatalf("the CA file's change not taken:\n%s", c)
	}
	good := copyText()
	os.Remove(filepath.Join(dir, "ca.pem"))
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "ca.pem")); err != nil {
		t.Fatal(err)
	}
	w.check()
	w.check()
	if c := copyText(); c != good {
		t.Fatalf("the copy changed after a refused change:\n%s", c)
	}
	if n := testutil.ToFloat64(w.refused); n != 1 {
		t.Fatalf("refused %v times, want 1 (not read again until it changes)", n)
	}
	os.Remove(filepath.Join(dir, "ca.pem"))
	write("ca.pem", "")
	if err := os.Truncate(filepath.Join(dir, "ca.pem"), readlimit.WebConfig.Limit+1); err != nil { // sparse
		t.Fatal(err)
	}
	w.check()
	w.check()
	if c := copyText(); c != good {
		t.Fatalf("the copy changed after a change over the bound:\n%s", c)
	}
	if n := testutil.ToFloat64(w.refused); n != 2 {
		t.Fatalf("refused %v times, want 2 (not read again until it changes)", n)
	}
}

// writeWebConfig writes into dir a web configuration (web.yml) with TLS,
// a client CA and basic auth, and the certificate, key and CA files it
// names (cert.pem, key.pem, ca.pem), each with mode perm.
func writeWebConfig(t testing.TB, dir string, perm os.FileMode) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	for name, s := range map[string]string{
		"cert.pem": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		"key.pem":  string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})),
		"ca.pem":   "not a certificate, but a CA file's content\n",
		"web.yml": "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n  client_ca_file: ca.pem\n  client_auth_type: VerifyClientCertIfGiven\n" +
			"basic_auth_users:\n  a: $2y$10$X0h1n5Vq3R9w4HMrBQ9a6uKkGqEZ0vqlWmXxFOrA5Ck7.Zq8e2oAy\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, perm); err != nil { // whatever the umask
			t.Fatal(err)
		}
	}
}

// BenchmarkWebConfigCheck is what the copy costs while nothing changes:
// one poll (every webConfigPoll) stats the web configuration and the
// three files it names (docs/architecture.md, "The web configuration's
// checked copy").
func BenchmarkWebConfigCheck(b *testing.B) {
	dir := b.TempDir()
	writeWebConfig(b, dir, 0o600)
	w, err := newWebConfigCopy(filepath.Join(dir, "web.yml"), log.NewNopLogger())
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	b.ReportAllocs()
	for b.Loop() {
		w.check()
	}
	if n := testutil.ToFloat64(w.refused); n != 0 {
		b.Fatalf("refused %v times", n)
	}
}
