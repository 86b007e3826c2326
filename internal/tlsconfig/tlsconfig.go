// Package tlsconfig builds the server's TLS configuration (CONTRACT §14):
// a certificate and key from files, re-read when either file changes, or
// certificates obtained automatically over ACME with
// golang.org/x/crypto/acme/autocert (TLS-ALPN-01 on the main listener,
// HTTP-01 on an optional plain-HTTP listener), cached in the data
// directory. TLS 1.2 is the minimum; HTTP/2 is offered through ALPN.
package tlsconfig

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"
)

// Options are the TLS settings of one server.
type Options struct {
	// CertFile and KeyFile are PEM files (--tls-cert, --tls-key); the
	// certificate file may hold the chain after the leaf.
	CertFile, KeyFile string
	// ACMEDomains are the names to obtain certificates for (--acme-domain).
	ACMEDomains []string
	// ACMEEmail is the contact address of the ACME account (--acme-email).
	ACMEEmail string
	// ACMEDirectory is the ACME directory URL (--acme-directory); empty is
	// Let's Encrypt's production directory.
	ACMEDirectory string
	// ACMEHTTPAddr, when set, is the plain-HTTP listener for HTTP-01
	// challenges (--acme-http-addr); it redirects everything else to https.
	ACMEHTTPAddr string
	// CacheDir keeps the ACME account key and certificates, unless Cache
	// is set.
	CacheDir string
	// Cache, when set, keeps them instead of CacheDir: a SharedCache in
	// the database replicas share.
	Cache autocert.Cache
	// HTTPClient talks to the ACME server; nil uses http.DefaultClient
	// (whose roots honour SSL_CERT_FILE for a private ACME CA).
	HTTPClient *http.Client
	// Logger receives reload and ACME messages; nil discards them.
	Logger *slog.Logger
}

// Enabled reports whether the options turn TLS on.
func (o *Options) Enabled() bool {
	return o.CertFile != "" || o.KeyFile != "" || len(o.ACMEDomains) > 0
}

// Validate checks that the options make sense together; messages name the
// flags.
func (o *Options) Validate() error {
	if (o.CertFile == "") != (o.KeyFile == "") {
		return errors.New("--tls-cert and --tls-key go together: give both or neither")
	}
	if o.CertFile != "" && len(o.ACMEDomains) > 0 {
		return errors.New("choose either --tls-cert/--tls-key or --acme-domain, not both")
	}
	if len(o.ACMEDomains) == 0 {
		for flag, v := range map[string]string{"--acme-email": o.ACMEEmail, "--acme-directory": o.ACMEDirectory, "--acme-http-addr": o.ACMEHTTPAddr} {
			if v != "" {
				return fmt.Errorf("%s needs --acme-domain", flag)
			}
		}
		return nil
	}
	for _, d := range o.ACMEDomains {
		if d == "" || strings.ContainsAny(d, "/:* ") || net.ParseIP(d) != nil {
			return fmt.Errorf("invalid --acme-domain %q: give a DNS name such as charts.example.com", d)
		}
	}
	if o.ACMEHTTPAddr != "" {
		if _, _, err := net.SplitHostPort(o.ACMEHTTPAddr); err != nil {
			return fmt.Errorf("invalid --acme-http-addr %q: use host:port, e.g. 0.0.0.0:80", o.ACMEHTTPAddr)
		}
	}
	if o.ACMEDirectory != "" && !strings.HasPrefix(o.ACMEDirectory, "https://") {
		return fmt.Errorf("invalid --acme-directory %q: use the https:// URL of an ACME directory", o.ACMEDirectory)
	}
	return nil
}

// TLS is a ready TLS setup: the configuration for the main listener and,
// with ACME over HTTP-01, the challenge listener.
type TLS struct {
	// Config is for the main listener.
	Config *tls.Config

	opts    Options
	manager *autocert.Manager
}

// New checks the options and builds the TLS setup. With certificate files
// it loads them once now, so a bad file stops the start.
func New(o Options) (*TLS, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	t := &TLS{opts: o}
	switch {
	case o.CertFile != "":
		r := &reloader{certFile: o.CertFile, keyFile: o.KeyFile, logger: o.Logger}
		if err := r.load(); err != nil {
			return nil, err
		}
		t.Config = baseConfig()
		t.Config.GetCertificate = r.getCertificate
	case len(o.ACMEDomains) > 0:
		cache := o.Cache
		if cache == nil {
			if o.CacheDir == "" {
				return nil, errors.New("ACME needs a cache directory")
			}
			if err := os.MkdirAll(o.CacheDir, 0o700); err != nil {
				return nil, fmt.Errorf("create the ACME cache directory: %w", err)
			}
			cache = autocert.DirCache(o.CacheDir)
		}
		client := &acme.Client{DirectoryURL: o.ACMEDirectory, HTTPClient: o.HTTPClient}
		if client.DirectoryURL == "" {
			client.DirectoryURL = autocert.DefaultACMEDirectory
		}
		t.manager = &autocert.Manager{
			Prompt:     autocert.AcceptTOS,
			HostPolicy: autocert.HostWhitelist(o.ACMEDomains...),
			Cache:      cache,
			Email:      o.ACMEEmail,
			Client:     client,
		}
		if o.ACMEHTTPAddr != "" {
			// Calling HTTPHandler is what makes the manager offer HTTP-01.
			_ = t.manager.HTTPHandler(nil)
		}
		t.Config = baseConfig()
		t.Config.GetCertificate = t.manager.GetCertificate
		t.Config.NextProtos = append(t.Config.NextProtos, acme.ALPNProto)
	default:
		return nil, nil
	}
	return t, nil
}

// baseConfig is TLS 1.2+ offering HTTP/2 and HTTP/1.1.
func baseConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"},
	}
}

// Listener wraps ln so it speaks TLS and nothing else.
func (t *TLS) Listener(ln net.Listener) net.Listener {
	return tls.NewListener(ln, t.Config)
}

// ServeChallenges starts the HTTP-01 challenge listener when ACME over
// HTTP-01 is configured (--acme-http-addr); it answers challenges and
// redirects every other request to https. The returned function stops it.
// Without HTTP-01 it does nothing.
func (t *TLS) ServeChallenges() (stop func(), err error) {
	if t == nil || t.manager == nil || t.opts.ACMEHTTPAddr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", t.opts.ACMEHTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on --acme-http-addr %s: %w", t.opts.ACMEHTTPAddr, err)
	}
	challenges := t.manager.HTTPHandler(nil)
	// autocert checks the Host header against --acme-domain as is; a
	// listener on a port other than 80 sees "name:port", so drop the port.
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if host, _, err := net.SplitHostPort(r.Host); err == nil {
			r.Host = host
		}
		challenges.ServeHTTP(w, r)
	})
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	t.opts.Logger.Info("ACME HTTP-01 challenges served", "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
	}, nil
}

// reloader serves a certificate from files and re-reads them when either
// changes (another inode, size or modification time), so a renewed
// certificate is picked up without a restart. A pair that does not load
// (one file written, the other not yet) keeps the previous certificate.
type reloader struct {
	certFile, keyFile string
	logger            *slog.Logger

	mu       sync.Mutex
	cert     *tls.Certificate
	certInfo os.FileInfo
	keyInfo  os.FileInfo
	failed   bool
}

// load reads the pair; it is the first load and later reloads.
func (r *reloader) load() error {
	ci, err := os.Stat(r.certFile)
	if err != nil {
		return fmt.Errorf("read --tls-cert: %w", err)
	}
	ki, err := os.Stat(r.keyFile)
	if err != nil {
		return fmt.Errorf("read --tls-key: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("load --tls-cert %s and --tls-key %s: %w", r.certFile, r.keyFile, err)
	}
	if cert.Leaf == nil && len(cert.Certificate) > 0 {
		cert.Leaf, _ = x509.ParseCertificate(cert.Certificate[0])
	}
	r.cert, r.certInfo, r.keyInfo, r.failed = &cert, ci, ki, false
	return nil
}

func sameFile(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// getCertificate returns the current certificate, reloading it first when
// a file changed.
func (r *reloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ci, cerr := os.Stat(r.certFile)
	ki, kerr := os.Stat(r.keyFile)
	if cerr == nil && kerr == nil && (!sameFile(ci, r.certInfo) || !sameFile(ki, r.keyInfo)) {
		old := r.cert
		if err := r.load(); err != nil {
			if !r.failed {
				r.logger.Warn("TLS certificate changed but does not load; still serving the previous one", "err", err)
			}
			r.failed = true
			// Remember what was seen so a half-written pair is retried
			// only when a file changes again.
			r.certInfo, r.keyInfo = ci, ki
		} else if old != nil {
			attrs := []any{"file", r.certFile}
			if r.cert.Leaf != nil {
				attrs = append(attrs, "not_after", r.cert.Leaf.NotAfter.UTC().Format(time.RFC3339))
			}
			r.logger.Info("TLS certificate reloaded", attrs...)
		}
	}
	return r.cert, nil
}
