package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// productionConfig is the example for operators; the tests run haproxy.cfg.tmpl.
const productionConfig = "../../packaging/haproxy.cfg"

// TestProductionHAProxyConfig: packaging/haproxy.cfg is a configuration Debian's HAProxy accepts
// without a warning (given a certificate where it expects one), and it balances, checks and
// retries as the template these tests prove does.
func TestProductionHAProxyConfig(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(haproxyBin); err != nil {
		t.Fatalf("%s is missing; install it with make deps-haproxy (apt-get install -y haproxy): %v", haproxyBin, err)
	}
	prod, err := os.ReadFile(productionConfig)
	if err != nil {
		t.Fatal(err)
	}
	const certPath = "/etc/haproxy/certs/masthead.pem"
	if !strings.Contains(string(prod), "crt "+certPath) {
		t.Fatalf("%s no longer names its certificate %s; update this test", productionConfig, certPath)
	}
	dir := t.TempDir()
	pemPath := filepath.Join(dir, "masthead.pem")
	if err := os.WriteFile(pemPath, selfSigned(t, "masthead.example.com"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(string(prod), certPath, pemPath)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(haproxyBin, "-c", "-f", cfg).CombinedOutput()
	if err != nil || strings.Contains(string(out), "[WARNING]") || strings.Contains(string(out), "[ALERT]") {
		t.Fatalf("haproxy -c %s: %v\n%s", productionConfig, err, out)
	}

	// The directives the cluster tests depend on, in both files.
	lines := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[strings.Join(strings.Fields(l), " ")] = true
		}
		return m
	}
	have := map[string]map[string]bool{productionConfig: lines(string(prod)), "haproxy.cfg.tmpl": lines(haproxyTemplate)}
	for _, d := range []string{
		"balance roundrobin",
		"option httpchk",
		"http-check expect status 200",
		"retries 3",
		"option redispatch 1",
		"retry-on conn-failure empty-response response-timeout",
		"http-request disable-l7-retry unless METH_GET",
		"option forwardfor",
	} {
		for file, l := range have {
			if !l[d] {
				t.Errorf("%s lacks %q", file, d)
			}
		}
	}
	for file, l := range have {
		found := false
		for line := range l {
			found = found || strings.HasPrefix(line, "http-check send meth GET uri /readyz")
		}
		if !found {
			t.Errorf("%s does not check GET /readyz", file)
		}
	}
}

// selfSigned is a PEM certificate for host followed by its key, as HAProxy's crt wants.
func selfSigned(t *testing.T, host string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})...)
}
