// Package oidcissuer is an OpenID Connect issuer for tests of trusted
// publishing (keyless CI): the ID tokens GitHub Actions and GitLab CI
// hand their jobs cannot be had here, so this issuer signs tokens of the
// same shape. It serves HTTPS on 127.0.0.1 under its own test CA (or plain
// HTTP, for --oidc-trust-insecure-issuers), a discovery document and a
// JWKS whose keys rotate, and GitHub Actions' ID-token request endpoint
// (ACTIONS_ID_TOKEN_REQUEST_URL) so the CLI's own request is tested too.
//
// Tokens are signed with go-jose (RS256, as GitHub and GitLab sign).
package oidcissuer

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/chartctl/chartctl/internal/testkit"
)

// Claims are the claims of a token, by name, as they are serialized.
type Claims map[string]any

// Issuer is a running test OIDC issuer. Create one with New or NewHTTP.
type Issuer struct {
	// URL is the issuer's URL (the iss of its tokens), without a
	// trailing slash.
	URL string
	// CertPEM is the test CA's certificate and Pool a pool trusting it;
	// both are nil for a plain-HTTP issuer.
	CertPEM []byte
	Pool    *x509.CertPool
	// ActionsRequestToken is the bearer token the ID-token request
	// endpoint (ActionsRequestURL) wants, as GitHub's
	// ACTIONS_ID_TOKEN_REQUEST_TOKEN.
	ActionsRequestToken string

	srv *httptest.Server
	ca  *testkit.CA

	mu        sync.Mutex
	published []*key // in the JWKS, oldest first
	signing   *key
	now       func() time.Time
	actions   Claims // the template of ID-token requests
	jwksGets  int
	discovery int
}

type key struct {
	id   string
	priv *rsa.PrivateKey
}

// New starts an HTTPS issuer on 127.0.0.1 with a new test CA and one
// signing key; tb's cleanup stops it.
func New(tb testing.TB) *Issuer {
	tb.Helper()
	return NewNamed(tb, "")
}

// NewNamed is New with the issuer's URL naming host (such as
// "localhost") instead of the address 127.0.0.1, so a verifier must
// resolve the name to reach it.
func NewNamed(tb testing.TB, host string) *Issuer {
	tb.Helper()
	i := newIssuer(tb)
	i.ca = testkit.NewCA(tb)
	certPEM, keyPEM, _ := i.ca.Issue(tb, "127.0.0.1", "localhost")
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		tb.Fatal(err)
	}
	i.srv = httptest.NewUnstartedServer(i.handler())
	i.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	i.srv.StartTLS()
	i.URL = i.srv.URL
	if host != "" {
		i.URL = "https://" + net.JoinHostPort(host, strconv.Itoa(i.srv.Listener.Addr().(*net.TCPAddr).Port))
	}
	i.CertPEM, i.Pool = i.ca.CertPEM, i.ca.Pool
	tb.Cleanup(i.srv.Close)
	return i
}

// NewHTTP starts a plain-HTTP issuer on 127.0.0.1 (a server accepts it
// only when --oidc-trust-insecure-issuers lists it).
func NewHTTP(tb testing.TB) *Issuer {
	tb.Helper()
	i := newIssuer(tb)
	i.srv = httptest.NewServer(i.handler())
	i.URL = i.srv.URL
	tb.Cleanup(i.srv.Close)
	return i
}

func newIssuer(tb testing.TB) *Issuer {
	i := &Issuer{now: time.Now, ActionsRequestToken: "actions-" + randomHex(8)}
	i.signing = newKey(tb)
	i.published = []*key{i.signing}
	return i
}

func newKey(tb testing.TB) *key {
	tb.Helper()
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		tb.Fatal(err)
	}
	return &key{id: "key-" + randomHex(6), priv: priv}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// SetClock makes the issuer stamp iat, nbf and exp from now (time.Now by
// default), to match a server's injected clock.
func (i *Issuer) SetClock(now func() time.Time) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.now = now
}

// Host returns the issuer's host:port.
func (i *Issuer) Host() string { return i.srv.Listener.Addr().String() }

// KeyID returns the ID (kid) of the key tokens are signed with now.
func (i *Issuer) KeyID() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.signing.id
}

// Rotate adds a new key to the JWKS and signs with it from now on; the
// old key stays published until Retire. It returns the new key's ID.
func (i *Issuer) Rotate(tb testing.TB) string {
	tb.Helper()
	k := newKey(tb)
	i.mu.Lock()
	defer i.mu.Unlock()
	i.published = append(i.published, k)
	i.signing = k
	return k.id
}

// Retire removes the key with id from the JWKS (tokens it signed no
// longer verify once a verifier re-fetches the JWKS).
func (i *Issuer) Retire(id string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	for n, k := range i.published {
		if k.id == id {
			i.published = append(i.published[:n:n], i.published[n+1:]...)
			return
		}
	}
}

// JWKSFetches returns how many times the JWKS was fetched.
func (i *Issuer) JWKSFetches() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.jwksGets
}

// Token signs claims with the current key.
func (i *Issuer) Token(tb testing.TB, claims Claims) string {
	tb.Helper()
	i.mu.Lock()
	k := i.signing
	i.mu.Unlock()
	tok, err := sign(k, claims)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// TokenUnpublished signs claims with a fresh key that the JWKS never
// lists, as a forger would, under a key ID of its own.
func (i *Issuer) TokenUnpublished(tb testing.TB, claims Claims) string {
	tb.Helper()
	tok, err := sign(newKey(tb), claims)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// TokenWithKeyID signs claims with a fresh, unpublished key that claims
// to be the published key id: the signature does not verify.
func (i *Issuer) TokenWithKeyID(tb testing.TB, id string, claims Claims) string {
	tb.Helper()
	k := newKey(tb)
	k.id = id
	tok, err := sign(k, claims)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

func sign(k *key, claims Claims) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.id}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("signer: %w", err)
	}
	return jwt.Signed(signer).Claims(map[string]any(claims)).Serialize()
}

// times returns iat, nbf and exp for a token living ttl from now.
func (i *Issuer) times(ttl time.Duration) (iat, exp int64) {
	i.mu.Lock()
	now := i.now()
	i.mu.Unlock()
	return now.Unix(), now.Add(ttl).Unix()
}

// GitHub returns the claims GitHub Actions puts in a job's ID token for a
// push to main of repository OWNER/REPO in environment "release", for
// audience aud, valid 5 minutes (as GitHub's are), each with a fresh jti.
// Change the map to vary them.
func (i *Issuer) GitHub(repository, aud string) Claims {
	owner, _, _ := cut(repository, '/')
	iat, exp := i.times(5 * time.Minute)
	return Claims{
		"iss":                   i.URL,
		"sub":                   "repo:" + repository + ":ref:refs/heads/main",
		"aud":                   aud,
		"jti":                   "jti-" + randomHex(12),
		"iat":                   iat,
		"nbf":                   iat,
		"exp":                   exp,
		"repository":            repository,
		"repository_id":         "123456789",
		"repository_owner":      owner,
		"repository_owner_id":   "98765",
		"repository_visibility": "private",
		"ref":                   "refs/heads/main",
		"ref_type":              "branch",
		"ref_protected":         "true",
		"sha":                   "0123456789abcdef0123456789abcdef01234567",
		"environment":           "release",
		"workflow":              "release",
		"workflow_ref":          repository + "/.github/workflows/release.yml@refs/heads/main",
		"job_workflow_ref":      repository + "/.github/workflows/release.yml@refs/heads/main",
		"event_name":            "push",
		"actor":                 "octocat",
		"actor_id":              "583231",
		"run_id":                "4242424242",
		"run_number":            "17",
		"run_attempt":           "1",
		"runner_environment":    "github-hosted",
	}
}

// GitLab returns the claims GitLab CI puts in a job's ID token (id_tokens:
// with aud) for a pipeline of project GROUP/PROJECT on branch main, for
// audience aud, valid 5 minutes, each with a fresh jti.
func (i *Issuer) GitLab(project, aud string) Claims {
	ns, _, _ := cut(project, '/')
	iat, exp := i.times(5 * time.Minute)
	return Claims{
		"iss":                   i.URL,
		"sub":                   "project_path:" + project + ":ref_type:branch:ref:main",
		"aud":                   aud,
		"jti":                   "jti-" + randomHex(12),
		"iat":                   iat,
		"nbf":                   iat,
		"exp":                   exp,
		"namespace_id":          "72",
		"namespace_path":        ns,
		"project_id":            "20",
		"project_path":          project,
		"user_id":               "5",
		"user_login":            "ci-user",
		"user_email":            "ci-user@example.com",
		"pipeline_id":           "574",
		"pipeline_source":       "push",
		"job_id":                "302",
		"ref":                   "main",
		"ref_type":              "branch",
		"ref_path":              "refs/heads/main",
		"ref_protected":         "true",
		"environment":           "production",
		"environment_protected": "true",
		"runner_environment":    "gitlab-hosted",
	}
}

func cut(s string, sep byte) (before, after string, ok bool) {
	for n := 0; n < len(s); n++ {
		if s[n] == sep {
			return s[:n], s[n+1:], true
		}
	}
	return s, "", false
}

// ServeActionsTokens makes ActionsRequestURL hand out tokens with
// template's claims (a fresh jti and times each, aud from the request's
// audience parameter), as GitHub Actions does for a job with
// `permissions: id-token: write`.
func (i *Issuer) ServeActionsTokens(template Claims) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.actions = template
}

// ActionsRequestURL is the URL a job finds in ACTIONS_ID_TOKEN_REQUEST_URL
// (it already has a query, so callers append "&audience=…").
func (i *Issuer) ActionsRequestURL() string { return i.URL + "/_actions/token?api-version=2.0" }

// WriteCertFile writes the CA certificate into dir and returns its path,
// for SSL_CERT_FILE of a child process (a built chartctl).
func (i *Issuer) WriteCertFile(tb testing.TB, dir string) string {
	tb.Helper()
	if i.CertPEM == nil {
		tb.Fatal("oidcissuer: a plain-HTTP issuer has no CA")
	}
	p := filepath.Join(dir, "oidc-issuer-ca.pem")
	if err := os.WriteFile(p, i.CertPEM, 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

// Client returns an HTTP client that trusts the issuer's CA.
func (i *Issuer) Client() *http.Client {
	if i.Pool == nil {
		return &http.Client{}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: i.Pool, MinVersion: tls.VersionTLS12}}}
}

func (i *Issuer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		i.mu.Lock()
		i.discovery++
		i.mu.Unlock()
		writeJSON(w, map[string]any{
			"issuer":                                i.URL,
			"jwks_uri":                              i.URL + "/.well-known/jwks",
			"subject_types_supported":               []string{"public", "pairwise"},
			"response_types_supported":              []string{"id_token"},
			"claims_supported":                      []string{"sub", "aud", "exp", "iat", "iss", "jti", "nbf", "ref", "repository", "repository_owner", "environment", "job_workflow_ref", "project_path", "namespace_path"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
			"scopes_supported":                      []string{"openid"},
		})
	})
	mux.HandleFunc("GET /.well-known/jwks", func(w http.ResponseWriter, r *http.Request) {
		i.mu.Lock()
		i.jwksGets++
		set := jose.JSONWebKeySet{}
		for _, k := range i.published {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.priv.PublicKey, KeyID: k.id, Algorithm: string(jose.RS256), Use: "sig"})
		}
		i.mu.Unlock()
		writeJSON(w, set)
	})
	mux.HandleFunc("GET /_actions/token", func(w http.ResponseWriter, r *http.Request) {
		i.mu.Lock()
		tmpl := i.actions
		k := i.signing
		i.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+i.ActionsRequestToken || tmpl == nil {
			http.Error(w, `{"message":"bad credentials"}`, http.StatusUnauthorized)
			return
		}
		claims := Claims{}
		for name, v := range tmpl {
			claims[name] = v
		}
		iat, exp := i.times(5 * time.Minute)
		claims["iat"], claims["nbf"], claims["exp"], claims["jti"] = iat, iat, exp, "jti-"+randomHex(12)
		if aud := r.URL.Query().Get("audience"); aud != "" {
			claims["aud"] = aud
		}
		tok, err := sign(k, claims)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, map[string]string{"value": tok})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
