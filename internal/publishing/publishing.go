// Package publishing verifies the OIDC ID tokens CI systems hand their
// jobs (GitHub Actions, GitLab CI, a Kubernetes service account) for
// trusted publishing (CONTRACT §18 "Access"): the token's signature
// against its issuer's JWKS, its audience, times and jti, and the claim
// conditions of a trusted publisher. It decides nothing about robots or
// repositories; the application layer (internal/app/exchange.go) does.
//
// An issuer's discovery document and JWKS are fetched only for issuers a
// trusted publisher names (the caller looks the unverified iss up first),
// through the private-address guard (internal/netguard) unless the
// operator lists the issuer in --oidc-trust-insecure-issuers (decision 5),
// honouring HTTPS_PROXY / NO_PROXY once the issuer itself passed the guard
// (netguard.Upstream), and the JWKS is cached and re-fetched at most once a minute, so a key
// rotation is followed without letting tokens with made-up key IDs drive
// fetches.
package publishing

import (
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/netguard"
)

// FlagInsecureIssuers is the server flag listing the issuers that may be
// plain http and on private addresses.
const FlagInsecureIssuers = "--oidc-trust-insecure-issuers"

// FlagAllowPrivate is the server flag that lets issuers of trusted
// publishers resolve to private addresses.
const FlagAllowPrivate = "--allow-private-upstreams"

// GitHubIssuer is GitHub Actions' issuer.
const GitHubIssuer = "https://token.actions.githubusercontent.com"

// DefaultRefetchInterval is how often, at most, an issuer's JWKS is
// fetched again (decision 5).
const DefaultRefetchInterval = time.Minute

// clockSkew is the leeway of nbf and iat, as go-oidc allows for nbf.
const clockSkew = 5 * time.Minute

// algorithms are the signature algorithms accepted: those of GitHub,
// GitLab, Kubernetes and the usual providers; never "none" or HMAC.
var algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// Config configures a Verifier.
type Config struct {
	// InsecureIssuers are issuer URLs trusted as configured by the
	// operator: they may be plain http and on private addresses.
	InsecureIssuers []string
	// AllowPrivate lets other issuers resolve to private addresses.
	AllowPrivate bool
	// RootCAs verifies issuers' TLS certificates (nil: the system's).
	RootCAs *x509.CertPool
	// Timeout bounds each fetch (0: 10 seconds).
	Timeout time.Duration
	// RefetchInterval is the least time between two fetches of one
	// issuer's JWKS (0: DefaultRefetchInterval).
	RefetchInterval time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Verifier verifies subject tokens. It is safe for concurrent use.
type Verifier struct {
	cfg      Config
	guarded  *http.Client
	insecure *http.Client

	mu      sync.Mutex
	issuers map[string]*issuerKeys
}

// New returns a Verifier.
func New(cfg Config) *Verifier {
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.RefetchInterval == 0 {
		cfg.RefetchInterval = DefaultRefetchInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	// Compared without a trailing slash; the caller's slice stays as is.
	insecure := make([]string, len(cfg.InsecureIssuers))
	for n, u := range cfg.InsecureIssuers {
		insecure[n] = strings.TrimSuffix(u, "/")
	}
	cfg.InsecureIssuers = insecure
	tlsConf := &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12}
	guarded := netguard.Upstream(cfg.Timeout, cfg.AllowPrivate, FlagAllowPrivate+" (or list the issuer in "+FlagInsecureIssuers+")")
	guarded.TLSClientConfig = tlsConf
	// Issuers the operator lists are reached like any configured endpoint
	// (decision 5): no address guard, the environment's proxy honoured.
	open := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsConf, TLSHandshakeTimeout: cfg.Timeout,
		ResponseHeaderTimeout: cfg.Timeout, MaxIdleConnsPerHost: 2, IdleConnTimeout: 30 * time.Second}
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Verifier{
		cfg:      cfg,
		guarded:  &http.Client{Transport: guarded, Timeout: cfg.Timeout, CheckRedirect: noRedirect},
		insecure: &http.Client{Transport: open, Timeout: cfg.Timeout, CheckRedirect: noRedirect},
		issuers:  map[string]*issuerKeys{},
	}
}

// Refusal is why a subject token is refused: an RFC 8693 §2.2.2 error.
// Check names the failed check (audience, claim, expired, …) for the
// audit log; Description says it to the caller.
type Refusal struct {
	// Code is the OAuth error code: invalid_request for every refused
	// token (RFC 8693 §2.2.2), unsupported_grant_type, invalid_target.
	Code        string
	Check       string
	Description string
}

func (r *Refusal) Error() string { return r.Description }

// The checks a Refusal names.
const (
	CheckRequest   = "request"
	CheckMalformed = "malformed"
	CheckIssuer    = "unknown_issuer"
	CheckFetch     = "issuer_unreachable"
	CheckPrivate   = "issuer_not_allowed"
	CheckKey       = "unknown_key"
	CheckSignature = "signature"
	CheckExpired   = "expired"
	CheckNotYet    = "not_yet_valid"
	CheckJTI       = "jti"
	CheckReplay    = "replayed"
	CheckAudience  = "audience"
	CheckClaim     = "claim"
	CheckAmbiguous = "ambiguous"
	CheckRobot     = "robot"
)

func refuse(check, format string, args ...any) *Refusal {
	return &Refusal{Code: "invalid_request", Check: check, Description: fmt.Sprintf(format, args...)}
}

// Token is a verified subject token.
type Token struct {
	Issuer   string
	Subject  string
	Audience []string
	JTI      string
	Expiry   time.Time
	// Claims holds every claim: strings as their value, other values as
	// their JSON text.
	Claims map[string]string
}

// Issuer returns the iss claim of raw without verifying anything, to find
// the trusted publishers that name it: only those issuers are fetched.
func Issuer(raw string) (string, error) {
	jws, err := jose.ParseSigned(raw, algorithms)
	if err != nil {
		return "", refuse(CheckMalformed, "subject_token is not a signed JWT (%s); send the CI job's OIDC ID token.", shortJOSE(err))
	}
	var c struct {
		Issuer string `json:"iss"`
	}
	if err := json.Unmarshal(jws.UnsafePayloadWithoutVerification(), &c); err != nil || c.Issuer == "" {
		return "", refuse(CheckMalformed, "subject_token has no iss claim.")
	}
	return c.Issuer, nil
}

// shortJOSE keeps go-jose's reason without its package prefix.
func shortJOSE(err error) string {
	return strings.TrimPrefix(err.Error(), "go-jose/go-jose: ")
}

// Verify checks raw as a token of issuer: its signature against the
// issuer's JWKS (fetched when not cached, re-fetched at most once per
// RefetchInterval for a key ID the cache lacks), exp, nbf and iat against
// the clock, and that it has a jti. It does not check the audience:
// Match does, per publisher. Every refusal is a *Refusal.
func (v *Verifier) Verify(ctx context.Context, raw, issuer string) (*Token, error) {
	jws, err := jose.ParseSigned(raw, algorithms)
	if err != nil {
		return nil, refuse(CheckMalformed, "subject_token is not a signed JWT (%s).", shortJOSE(err))
	}
	if len(jws.Signatures) != 1 {
		return nil, refuse(CheckMalformed, "subject_token must carry exactly one signature.")
	}
	kid := jws.Signatures[0].Header.KeyID
	keys, err := v.keys(ctx, issuer, kid)
	if err != nil {
		return nil, err
	}
	var verified bool
	for _, k := range keys {
		if _, err := jws.Verify(k.Key); err == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, refuse(CheckSignature, "The token's signature does not verify with the key %s of issuer %s: it was not signed by that issuer.", quoteKID(kid), issuer)
	}
	// go-oidc checks iss, exp and nbf on the signature-checked payload,
	// with the keys just found.
	pub := make([]crypto.PublicKey, len(keys))
	for n, k := range keys {
		pub[n] = k.Key
	}
	idt, err := oidc.NewVerifier(issuer, &oidc.StaticKeySet{PublicKeys: pub}, &oidc.Config{SkipClientIDCheck: true, Now: v.cfg.Now,
		SupportedSigningAlgs: algNames()}).Verify(ctx, raw)
	if err != nil {
		var exp *oidc.TokenExpiredError
		switch {
		case errors.As(err, &exp):
			return nil, refuse(CheckExpired, "The token expired at %s; request a fresh one from the CI system.", exp.Expiry.UTC().Format(time.RFC3339))
		case strings.Contains(err.Error(), "nbf"):
			return nil, refuse(CheckNotYet, "The token is not valid yet (nbf is in the future); check the issuer's clock.")
		case strings.Contains(err.Error(), "different provider"):
			return nil, refuse(CheckIssuer, "The token's iss is not %s.", issuer)
		}
		return nil, refuse(CheckMalformed, "The token could not be read: %s.", strings.TrimPrefix(err.Error(), "oidc: "))
	}
	now := v.cfg.Now()
	if !idt.IssuedAt.IsZero() && idt.IssuedAt.After(now.Add(clockSkew)) {
		return nil, refuse(CheckNotYet, "The token was issued in the future (iat %s); check the issuer's clock.", idt.IssuedAt.UTC().Format(time.RFC3339))
	}
	var rawClaims map[string]json.RawMessage
	if err := idt.Claims(&rawClaims); err != nil {
		return nil, refuse(CheckMalformed, "The token's claims are not a JSON object.")
	}
	t := &Token{Issuer: idt.Issuer, Subject: idt.Subject, Audience: idt.Audience, Expiry: idt.Expiry, Claims: map[string]string{}}
	for name, val := range rawClaims {
		t.Claims[name] = claimText(val)
	}
	if _, ok := rawClaims["jti"]; ok {
		t.JTI = t.Claims["jti"]
	}
	if t.JTI == "" {
		// Decision 8: without a jti a token cannot be told from its
		// replay.
		return nil, refuse(CheckJTI, "The token has no jti claim, so its replay could not be detected; use a CI system that sets jti (GitHub Actions and GitLab CI do).")
	}
	if idt.Expiry.IsZero() {
		return nil, refuse(CheckExpired, "The token has no exp claim; tokens must expire.")
	}
	return t, nil
}

func algNames() []string {
	out := make([]string, len(algorithms))
	for n, a := range algorithms {
		out[n] = string(a)
	}
	return out
}

func quoteKID(kid string) string {
	if kid == "" {
		return "(no kid)"
	}
	return fmt.Sprintf("%q", kid)
}

// claimText is a claim's value for matching: a string's value, any other
// value's compact JSON text (true, 42, ["a","b"]).
func claimText(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Match reports whether t satisfies publisher p: p's audience is one of
// t's, and every claim condition of p names a claim t has whose value
// matches (exactly, or as a glob with path.Match's `*`, `?` and `[…]`).
// It returns the matched claims (name → the token's value), or the
// refusal naming the first failed check.
func Match(t *Token, p *chartctl.TrustedPublisher) (map[string]string, *Refusal) {
	audOK := false
	for _, a := range t.Audience {
		if a == p.Audience {
			audOK = true
		}
	}
	if !audOK {
		return nil, refuse(CheckAudience, "The token's audience %s is not the audience the trusted publisher expects; request the token with that audience (GitHub: core.getIDToken(AUD), GitLab: id_tokens: aud).", quoteList(t.Audience))
	}
	names := make([]string, 0, len(p.Claims))
	for name := range p.Claims {
		names = append(names, name)
	}
	sort.Strings(names)
	matched := map[string]string{}
	for _, name := range names {
		val, ok := t.Claims[name]
		if !ok {
			return nil, refuse(CheckClaim, "The token has no %s claim, which the trusted publisher requires.", name)
		}
		if !MatchClaim(p.Claims[name], val) {
			return nil, refuse(CheckClaim, "The token's %s claim %q does not match the trusted publisher's condition.", name, val)
		}
		matched[name] = val
	}
	return matched, nil
}

// MatchClaim reports whether a claim's value matches pattern: equal, or
// a path.Match glob over the whole value (`*` does not cross `/`).
func MatchClaim(pattern, value string) bool {
	if pattern == value {
		return true
	}
	ok, err := path.Match(pattern, value)
	return err == nil && ok
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for n, s := range ss {
		q[n] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// ValidateIssuer checks an issuer URL for a trusted publisher: an
// absolute https URL without query or fragment, or http when the
// operator lists it in --oidc-trust-insecure-issuers. Tokens' iss is
// compared with it exactly, so callers store it as given.
func (v *Verifier) ValidateIssuer(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return chartctl.Invalid("issuer", "issuer must be the OIDC issuer's URL, such as %s (no query, fragment or credentials).", GitHubIssuer)
	}
	if u.Scheme == "http" && !v.trustedInsecure(raw) {
		return chartctl.Invalid("issuer", "issuer must be an https URL; an operator may allow a plain-http issuer with %s.", FlagInsecureIssuers)
	}
	return nil
}

func (v *Verifier) trustedInsecure(issuer string) bool {
	issuer = strings.TrimSuffix(issuer, "/")
	for _, u := range v.cfg.InsecureIssuers {
		if u == issuer {
			return true
		}
	}
	return false
}

// ValidateClaims checks a publisher's claim conditions: at least one,
// each a non-empty claim name and a well-formed pattern, and for GitHub's
// issuer one of repository, repository_owner or sub, so that no publisher
// accepts every repository on GitHub.
func ValidateClaims(issuer string, claims map[string]string) error {
	if len(claims) == 0 {
		return chartctl.Invalid("claims", "Give at least one claim condition, such as repository=acme/charts: a publisher without one would accept any token of the issuer.")
	}
	if len(claims) > 50 {
		return chartctl.Invalid("claims", "At most 50 claim conditions are allowed.")
	}
	for name, pat := range claims {
		if strings.TrimSpace(name) == "" || len(name) > 200 {
			return chartctl.Invalid("claims", "A claim name must be 1 to 200 characters.")
		}
		switch name {
		case "iss", "aud", "exp", "nbf", "iat", "jti":
			return chartctl.Invalid("claims", "Claim %q is checked by the server itself; condition other claims (repository, ref, sub, …).", name)
		}
		if strings.TrimSpace(pat) == "" || len(pat) > 500 {
			return chartctl.Invalid("claims", "The condition of claim %q must be 1 to 500 characters.", name)
		}
		if _, err := path.Match(pat, ""); err != nil {
			return chartctl.Invalid("claims", "The condition of claim %q is not a valid glob: %v.", name, err)
		}
		if strings.Trim(pat, "*") == "" {
			return chartctl.Invalid("claims", "The condition of claim %q matches every value; name the value, or a pattern such as refs/heads/*.", name)
		}
	}
	if strings.TrimSuffix(issuer, "/") == GitHubIssuer {
		if _, ok := claims["repository"]; !ok {
			if _, ok := claims["repository_owner"]; !ok {
				if _, ok := claims["sub"]; !ok {
					return chartctl.Invalid("claims", "A GitHub Actions publisher must condition repository, repository_owner or sub: otherwise any repository on GitHub could publish.")
				}
			}
		}
	}
	return nil
}

// issuerKeys is the cached JWKS of one issuer.
type issuerKeys struct {
	mu      sync.Mutex
	jwksURL string
	keys    []jose.JSONWebKey
	// fetched is the last fetch attempt, err its error.
	fetched time.Time
	err     error
}

// keys returns the keys of issuer that may have signed a token with kid:
// the one with that ID, or every key when kid is empty. It fetches the
// JWKS when nothing is cached, or again when the cached set lacks kid and
// the last fetch is older than RefetchInterval.
func (v *Verifier) keys(ctx context.Context, issuer, kid string) ([]jose.JSONWebKey, error) {
	v.mu.Lock()
	ik := v.issuers[issuer]
	if ik == nil {
		ik = &issuerKeys{}
		v.issuers[issuer] = ik
	}
	v.mu.Unlock()
	// One fetch per issuer at a time; the others wait for its keys.
	ik.mu.Lock()
	defer ik.mu.Unlock()
	found := ik.find(kid)
	if len(found) > 0 {
		return found, nil
	}
	now := v.cfg.Now()
	if ik.fetched.IsZero() || now.Sub(ik.fetched) >= v.cfg.RefetchInterval {
		ik.fetched = now
		ik.err = v.fetch(ctx, issuer, ik)
		found = ik.find(kid)
	}
	if len(found) > 0 {
		return found, nil
	}
	if ik.err != nil {
		return nil, ik.err
	}
	return nil, refuse(CheckKey, "The token was signed with key %s, which issuer %s does not publish in its JWKS (keys are re-read at most once a minute).", quoteKID(kid), issuer)
}

func (ik *issuerKeys) find(kid string) []jose.JSONWebKey {
	if kid == "" {
		return ik.keys
	}
	for _, k := range ik.keys {
		if k.KeyID == kid {
			return []jose.JSONWebKey{k}
		}
	}
	return nil
}

// fetch reads the issuer's discovery document (once) and its JWKS into ik.
func (v *Verifier) fetch(ctx context.Context, issuer string, ik *issuerKeys) error {
	hc := v.guarded
	if v.trustedInsecure(issuer) {
		hc = v.insecure
	} else if !strings.HasPrefix(issuer, "https://") {
		return refuse(CheckPrivate, "Issuer %s is not https; this server fetches plain-http issuers only when listed in %s.", issuer, FlagInsecureIssuers)
	}
	if ik.jwksURL == "" {
		var doc struct {
			Issuer  string `json:"issuer"`
			JWKSURL string `json:"jwks_uri"`
		}
		if err := v.getJSON(ctx, hc, strings.TrimSuffix(issuer, "/")+"/.well-known/openid-configuration", issuer, &doc); err != nil {
			return err
		}
		if doc.Issuer != issuer {
			return refuse(CheckFetch, "Issuer %s's discovery document names another issuer (%q); the publisher's issuer URL must be exactly the tokens' iss.", issuer, doc.Issuer)
		}
		u, err := url.Parse(doc.JWKSURL)
		if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && v.trustedInsecure(issuer))) {
			return refuse(CheckFetch, "Issuer %s's discovery document has no https jwks_uri.", issuer)
		}
		ik.jwksURL = doc.JWKSURL
	}
	var set jose.JSONWebKeySet
	if err := v.getJSON(ctx, hc, ik.jwksURL, issuer, &set); err != nil {
		return err
	}
	keys := set.Keys[:0]
	for _, k := range set.Keys {
		// Only public signing keys: a JWKS could list anything.
		if k.Valid() && k.IsPublic() && k.Use != "enc" {
			keys = append(keys, k)
		}
	}
	ik.keys = keys
	return nil
}

// getJSON GETs u with hc and decodes at most 1 MiB of JSON into v,
// turning failures into refusals that name the issuer.
func (v *Verifier) getJSON(ctx context.Context, hc *http.Client, u, issuer string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return refuse(CheckFetch, "Issuer %s has a malformed URL.", issuer)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		if errors.Is(err, netguard.ErrPrivateTarget) {
			return refuse(CheckPrivate, "Issuer %s resolves to a private address, which this server does not fetch from; an operator may allow it with %s or %s.", issuer, FlagInsecureIssuers, FlagAllowPrivate)
		}
		var uerr *url.Error
		reason := "could not be reached"
		if errors.As(err, &uerr) && uerr.Timeout() {
			reason = "did not answer in time"
		} else if errors.As(err, new(*tls.CertificateVerificationError)) {
			reason = "presented a certificate this server does not trust"
		}
		return refuse(CheckFetch, "Issuer %s %s; try again later.", issuer, reason)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return refuse(CheckFetch, "Issuer %s answered %d for %s.", issuer, resp.StatusCode, u)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out); err != nil {
		return refuse(CheckFetch, "Issuer %s sent a document that is not the JSON expected at %s.", issuer, u)
	}
	return nil
}
