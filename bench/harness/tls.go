package harness

import (
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/chartctl/chartctl/internal/testkit"
)

// TLS is a server certificate for 127.0.0.1, issued by a throwaway CA,
// that every server of a run presents and every client of the run trusts:
// issue #32 reads its targets over TLS within 2× of plain HTTP. A nil
// *TLS is plain HTTP; its methods say so.
type TLS struct {
	// CertFile and KeyFile are the server's certificate and key (PEM);
	// CAFile is the CA's certificate, for clients such as Helm.
	CertFile, KeyFile, CAFile string
	// Config is the clients' configuration: it trusts the CA and speaks
	// HTTP/1.1, as the plain-HTTP clients do.
	Config *tls.Config
}

// NewTLS makes the CA and the certificate, their files in dir.
func NewTLS(dir string) (*TLS, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ca, err := testkit.NewCAIn(dir)
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, _, err := ca.IssuePEM("127.0.0.1", "localhost")
	if err != nil {
		return nil, err
	}
	t := &TLS{CertFile: filepath.Join(dir, "server.pem"), KeyFile: filepath.Join(dir, "server-key.pem"), CAFile: ca.CertFile}
	if err := os.WriteFile(t.CertFile, certPEM, 0o644); err != nil {
		return nil, err
	}
	// nginx's master reads the key before it drops to its workers' user.
	if err := os.WriteFile(t.KeyFile, keyPEM, 0o600); err != nil {
		return nil, err
	}
	t.Config = &tls.Config{RootCAs: ca.Pool, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12}
	return t, nil
}

// Scheme is "https", or "http" for a nil t.
func (t *TLS) Scheme() string {
	if t == nil {
		return "http"
	}
	return "https"
}

// URL is the base URL of a server on addr (host:port).
func (t *TLS) URL(addr string) string { return t.Scheme() + "://" + addr }

// probeClient is a client for the readiness checks of a run's servers:
// its own connections, a second a request, trusting t's CA.
func (t *TLS) probeClient() *http.Client {
	return t.Trust(&http.Client{Transport: &http.Transport{}, Timeout: time.Second})
}

// Trust makes c's transport (an *http.Transport) trust t's CA and
// returns c; for a nil t it returns c as it is.
func (t *TLS) Trust(c *http.Client) *http.Client {
	if t == nil {
		return c
	}
	if tr, ok := c.Transport.(*http.Transport); ok {
		tr.TLSClientConfig = t.Config.Clone()
	}
	return c
}
