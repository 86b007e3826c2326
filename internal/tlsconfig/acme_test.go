package tlsconfig_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/tlsconfig"
)

// acmeName is the name certificates are requested for; the test's DNS
// server resolves it to 127.0.0.1 for Pebble.
const acmeName = "charts.chartctl.test"

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
		p := testkit.StartPebble(t, ln.Addr().(*net.TCPAddr).Port, testkit.FreePort(t))
		cache := filepath.Join(t.TempDir(), "acme")
		tc, err := tlsconfig.New(tlsconfig.Options{
			ACMEDomains: []string{acmeName}, ACMEEmail: "ops@example.com",
			ACMEDirectory: p.Directory, CacheDir: cache, HTTPClient: p.Client,
		})
		if err != nil {
			t.Fatal(err)
		}
		hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.Proto) })}
		go func() { _ = hs.Serve(tc.Listener(ln)) }()
		defer hs.Close()

		leaf := handshake(t, ln.Addr().String(), p.Roots(t))
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
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: p.Roots(t), ServerName: acmeName}, ForceAttemptHTTP2: true}
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
		httpPort := testkit.FreePort(t)
		// Pebble's TLS-ALPN-01 attempts go to a closed port, so only the
		// HTTP-01 challenge on --acme-http-addr can succeed.
		p := testkit.StartPebble(t, testkit.FreePort(t), httpPort)
		tc, err := tlsconfig.New(tlsconfig.Options{
			ACMEDomains: []string{acmeName}, ACMEDirectory: p.Directory,
			ACMEHTTPAddr: fmt.Sprintf("127.0.0.1:%d", httpPort),
			CacheDir:     filepath.Join(t.TempDir(), "acme"), HTTPClient: p.Client,
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

		leaf := handshake(t, ln.Addr().String(), p.Roots(t))
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
