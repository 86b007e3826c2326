package tlsconfig_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/tlsconfig"
)

// acmeName is the name certificates are requested for; the test's DNS
// server resolves it to 127.0.0.1 for Pebble.
const acmeName = "charts.chartctl.test"

// freePort returns a loopback port nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// pebble is a running Pebble ACME test server on loopback.
type pebble struct {
	directory string
	client    *http.Client // trusts Pebble's own listener
	mgmt      string
}

// startPebble runs the real Pebble (CHARTCTL_PEBBLE, else pebble on
// PATH) validating challenges on tlsPort (TLS-ALPN-01) and httpPort
// (HTTP-01) of the names' addresses.
func startPebble(t *testing.T, tlsPort, httpPort int) *pebble {
	t.Helper()
	bin := testkit.Tool(t, "CHARTCTL_PEBBLE", "pebble")
	ca := testkit.NewCA(t)
	dir := t.TempDir()
	cert, key, _ := ca.Issue(t, "localhost", "127.0.0.1")
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	testkit.WriteFileAtomic(t, certFile, cert)
	testkit.WriteFileAtomic(t, keyFile, key)
	listen, mgmt := freePort(t), freePort(t)
	conf := map[string]any{"pebble": map[string]any{
		"listenAddress":           fmt.Sprintf("127.0.0.1:%d", listen),
		"managementListenAddress": fmt.Sprintf("127.0.0.1:%d", mgmt),
		"certificate":             certFile,
		"privateKey":              keyFile,
		"httpPort":                httpPort,
		"tlsPort":                 tlsPort,
		"ocspResponderURL":        "",
		"retryAfter":              map[string]int{"authz": 1, "order": 1},
	}}
	b, _ := json.Marshal(conf)
	confFile := filepath.Join(dir, "pebble.json")
	if err := os.WriteFile(confFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-config", confFile, "-dnsserver", startDNS(t))
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("pebble output:\n%s", logs.String())
		}
	})
	p := &pebble{
		directory: fmt.Sprintf("https://127.0.0.1:%d/dir", listen),
		mgmt:      fmt.Sprintf("https://127.0.0.1:%d", mgmt),
		client:    &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}}},
	}
	// Wait until Pebble answers (it starts in well under a second).
	for i := 0; ; i++ {
		resp, err := p.client.Get(p.directory)
		if err == nil {
			resp.Body.Close()
			break
		}
		if i == 200 {
			t.Fatalf("pebble did not start: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return p
}

// roots returns a pool with Pebble's issuing root.
func (p *pebble) roots(t *testing.T) *x509.CertPool {
	t.Helper()
	resp, err := p.client.Get(p.mgmt + "/roots/0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatalf("pebble root: %s", b)
	}
	return pool
}

// handshake makes a TLS handshake for acmeName with addr and returns
// the verified chain's leaf.
func handshake(t *testing.T, addr string, roots *x509.CertPool) *x509.Certificate {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Minute}, "tcp", addr, &tls.Config{RootCAs: roots, ServerName: acmeName})
	if err != nil {
		t.Fatalf("handshake with %s: %v", addr, err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

func TestACMEWithPebble(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Pebble")
	}
	t.Run("tls-alpn-01", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := startPebble(t, ln.Addr().(*net.TCPAddr).Port, freePort(t))
		cache := filepath.Join(t.TempDir(), "acme")
		tc, err := tlsconfig.New(tlsconfig.Options{
			ACMEDomains: []string{acmeName}, ACMEEmail: "ops@example.com",
			ACMEDirectory: p.directory, CacheDir: cache, HTTPClient: p.client,
		})
		if err != nil {
			t.Fatal(err)
		}
		hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.Proto) })}
		go func() { _ = hs.Serve(tc.Listener(ln)) }()
		defer hs.Close()

		leaf := handshake(t, ln.Addr().String(), p.roots(t))
		if leaf.DNSNames[0] != acmeName {
			t.Errorf("certificate names = %v", leaf.DNSNames)
		}
		// The certificate and the account key are cached in the data dir.
		entries, _ := os.ReadDir(cache)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if len(entries) < 2 {
			t.Errorf("ACME cache holds %v, want the account key and the certificate", names)
		}
		// HTTP/2 still works with ACME's ALPN protocol offered beside it.
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: p.roots(t), ServerName: acmeName}, ForceAttemptHTTP2: true}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get("https://" + ln.Addr().String() + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.ProtoMajor != 2 {
			t.Errorf("protocol = %s", resp.Proto)
		}
	})

	t.Run("http-01", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		httpPort := freePort(t)
		// Pebble's TLS-ALPN-01 attempts go to a closed port, so only the
		// HTTP-01 challenge on --acme-http-addr can succeed.
		p := startPebble(t, freePort(t), httpPort)
		tc, err := tlsconfig.New(tlsconfig.Options{
			ACMEDomains: []string{acmeName}, ACMEDirectory: p.directory,
			ACMEHTTPAddr: fmt.Sprintf("127.0.0.1:%d", httpPort),
			CacheDir:     filepath.Join(t.TempDir(), "acme"), HTTPClient: p.client,
		})
		if err != nil {
			t.Fatal(err)
		}
		stop, err := tc.ServeChallenges()
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		hs := &http.Server{Handler: http.NotFoundHandler()}
		go func() { _ = hs.Serve(tc.Listener(ln)) }()
		defer hs.Close()

		leaf := handshake(t, ln.Addr().String(), p.roots(t))
		if leaf.DNSNames[0] != acmeName {
			t.Errorf("certificate names = %v", leaf.DNSNames)
		}
		// Plain HTTP on the challenge listener redirects to https.
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://127.0.0.1:%d/v1/repositories", httpPort), nil)
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 3 || resp.Header.Get("Location") != "https://127.0.0.1/v1/repositories" {
			t.Errorf("challenge listener answered %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
}
