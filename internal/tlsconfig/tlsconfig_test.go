package tlsconfig_test

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/tlsconfig"
)

// serve starts an HTTPS server with t's configuration on 127.0.0.1 and
// returns its address.
func serve(t *testing.T, tc *tlsconfig.TLS) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Proto)
	})}
	go func() { _ = hs.Serve(tc.Listener(ln)) }()
	t.Cleanup(func() { _ = hs.Close() })
	return ln.Addr().String()
}

// servedSerial handshakes with addr, trusting ca, and returns the serial
// number of the certificate served.
func servedSerial(t *testing.T, addr string, ca *testkit.CA) int64 {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"})
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

func TestCertificateFilesReloadWithoutRestart(t *testing.T) {
	ca := testkit.NewCA(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	c1, k1, s1 := ca.Issue(t, "localhost", "127.0.0.1")
	testkit.WriteFileAtomic(t, certFile, c1)
	testkit.WriteFileAtomic(t, keyFile, k1)

	tc, err := tlsconfig.New(tlsconfig.Options{CertFile: certFile, KeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, tc)
	if got := servedSerial(t, addr, ca); got != s1 {
		t.Fatalf("serial = %d, want %d", got, s1)
	}

	// Renewal: both files replaced; the next handshake has the new one.
	c2, k2, s2 := ca.Issue(t, "localhost", "127.0.0.1")
	testkit.WriteFileAtomic(t, keyFile, k2)
	testkit.WriteFileAtomic(t, certFile, c2)
	if got := servedSerial(t, addr, ca); got != s2 {
		t.Fatalf("after renewal serial = %d, want %d", got, s2)
	}

	// Half a renewal (a new certificate whose key is not there yet) keeps
	// the previous pair in service; the key arriving completes it.
	c3, k3, s3 := ca.Issue(t, "localhost", "127.0.0.1")
	testkit.WriteFileAtomic(t, certFile, c3)
	if got := servedSerial(t, addr, ca); got != s2 {
		t.Fatalf("with a mismatched pair serial = %d, want the previous %d", got, s2)
	}
	testkit.WriteFileAtomic(t, keyFile, k3)
	if got := servedSerial(t, addr, ca); got != s3 {
		t.Fatalf("after the key arrived serial = %d, want %d", got, s3)
	}

	// A file that is not a certificate at all also keeps the last good one.
	testkit.WriteFileAtomic(t, certFile, []byte("not a certificate"))
	if got := servedSerial(t, addr, ca); got != s3 {
		t.Fatalf("with a broken file serial = %d, want %d", got, s3)
	}
}

func TestHTTP2AndMinimumVersion(t *testing.T) {
	ca := testkit.NewCA(t)
	dir := t.TempDir()
	c, k, _ := ca.Issue(t, "localhost")
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	testkit.WriteFileAtomic(t, certFile, c)
	testkit.WriteFileAtomic(t, keyFile, k)
	tc, err := tlsconfig.New(tlsconfig.Options{CertFile: certFile, KeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, tc)

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("https://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 || string(body) != "HTTP/2.0" {
		t.Errorf("protocol = %s (server saw %s), want HTTP/2", resp.Proto, body)
	}

	_, err = tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost", MaxVersion: tls.VersionTLS11, MinVersion: tls.VersionTLS10})
	if err == nil {
		t.Error("a TLS 1.1 handshake succeeded")
	}
}

func TestOptionErrorsNameFlags(t *testing.T) {
	ca := testkit.NewCA(t)
	dir := t.TempDir()
	c, _, _ := ca.Issue(t, "localhost")
	_, otherKey, _ := ca.Issue(t, "other")
	certFile := filepath.Join(dir, "c.pem")
	keyOther := filepath.Join(dir, "other.pem")
	testkit.WriteFileAtomic(t, certFile, c)
	testkit.WriteFileAtomic(t, keyOther, otherKey)
	for _, tc := range []struct {
		o    tlsconfig.Options
		want string
	}{
		{tlsconfig.Options{CertFile: certFile}, "--tls-key"},
		{tlsconfig.Options{CertFile: certFile, KeyFile: filepath.Join(dir, "missing")}, "--tls-key"},
		{tlsconfig.Options{CertFile: certFile, KeyFile: keyOther}, "--tls-cert"},
		{tlsconfig.Options{CertFile: certFile, KeyFile: keyOther, ACMEDomains: []string{"a.example"}}, "not both"},
		{tlsconfig.Options{ACMEEmail: "a@b.c"}, "--acme-domain"},
		{tlsconfig.Options{ACMEDomains: []string{"10.0.0.1"}, CacheDir: dir}, "--acme-domain"},
		{tlsconfig.Options{ACMEDomains: []string{"a.example"}, ACMEDirectory: "http://acme", CacheDir: dir}, "--acme-directory"},
		{tlsconfig.Options{ACMEDomains: []string{"a.example"}, ACMEHTTPAddr: "80", CacheDir: dir}, "--acme-http-addr"},
	} {
		_, err := tlsconfig.New(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want mention of %s", tc.o, err, tc.want)
		}
	}
	if tc, err := tlsconfig.New(tlsconfig.Options{}); tc != nil || err != nil {
		t.Errorf("no options: %v, %v; want TLS off", tc, err)
	}
}
