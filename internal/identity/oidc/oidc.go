// Package oidc signs people in through an OpenID Connect provider (Okta,
// Entra ID, Keycloak, Dex, …) with the authorization code flow, PKCE,
// state and nonce. Discovery, the ID token's signature (JWKS, rotation
// followed) and its iss, aud and exp are go-oidc's; this package adds the
// nonce, the email_verified rule and the groups claim, and returns
// identity.Claims.
package oidc

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/identity"
)

// DefaultScopes are always asked for; Config.Scopes adds to them.
var DefaultScopes = []string{gooidc.ScopeOpenID, "email", "profile"}

// Config configures a Provider.
type Config struct {
	// Issuer is the provider's issuer URL (https).
	Issuer string
	// ClientID and ClientSecret are chartctl's client at the provider.
	ClientID, ClientSecret string
	// RedirectURL is {base}/signin/oidc/callback.
	RedirectURL string
	// Scopes are added to DefaultScopes.
	Scopes []string
	// GroupsClaim names the claim holding the groups ("groups").
	GroupsClaim string
	// AllowUnverifiedEmail accepts ID tokens whose email_verified is
	// false.
	AllowUnverifiedEmail bool
	// HTTPClient reaches the provider; nil uses http.DefaultClient (the
	// issuer is operator-configured, so no private-address guard:
	// CONTRACT §18 decision 5).
	HTTPClient *http.Client
	// Now is the clock of the JWKS refetch interval (time.Now if nil);
	// ID token expiry is checked against the wall clock.
	Now func() time.Time
}

// Provider is a discovered OpenID Connect provider. Create it with New.
type Provider struct {
	cfg      Config
	oauth    oauth2.Config
	verifier *gooidc.IDTokenVerifier
	keys     *keySet
}

// New discovers the provider at cfg.Issuer. Its error says what to check:
// the issuer is the operator's setting.
func New(ctx context.Context, cfg Config) (*Provider, error) {
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = "groups"
	}
	if cfg.HTTPClient != nil {
		ctx = gooidc.ClientContext(ctx, cfg.HTTPClient)
	}
	p, err := gooidc.NewProvider(ctx, cfg.Issuer)
	if err != nil {
		// %v, not %w: the cause is the provider's, and callers that map
		// network errors to hints about chartctl's own server must not
		// take it for one.
		return nil, fmt.Errorf("OIDC discovery at %s/.well-known/openid-configuration failed: %v (check --oidc-issuer, and that this server trusts the issuer's certificate)", strings.TrimRight(cfg.Issuer, "/"), err)
	}
	scopes := append([]string{}, DefaultScopes...)
	for _, s := range cfg.Scopes {
		if s = strings.TrimSpace(s); s != "" && !contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	var doc struct {
		JWKSURL string   `json:"jwks_uri"`
		Algs    []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := p.Claims(&doc); err != nil || doc.JWKSURL == "" {
		return nil, fmt.Errorf("the OIDC discovery document of %s has no jwks_uri (check --oidc-issuer)", cfg.Issuer)
	}
	hc, now := cfg.HTTPClient, cfg.Now
	if hc == nil {
		hc = http.DefaultClient
	}
	if now == nil {
		now = time.Now
	}
	// Our own key set rather than go-oidc's remote one: it re-fetches
	// the JWKS at most once a minute (decision 5).
	keys := &keySet{url: doc.JWKSURL, hc: hc, now: now}
	return &Provider{
		cfg:   cfg,
		oauth: oauth2.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, Endpoint: p.Endpoint(), RedirectURL: cfg.RedirectURL, Scopes: scopes},
		verifier: gooidc.NewVerifier(strings.TrimRight(cfg.Issuer, "/"), keys, &gooidc.Config{ClientID: cfg.ClientID,
			SupportedSigningAlgs: doc.Algs}),
		keys: keys,
	}, nil
}

// KeyFetches reports how many times the provider's JWKS was fetched.
func (p *Provider) KeyFetches() int {
	p.keys.mu.Lock()
	defer p.keys.mu.Unlock()
	return p.keys.fetches
}

// Request is one sign-in in progress: what the browser's round trip to
// the provider must bring back.
type Request struct {
	State, Nonce, Verifier string
}

// NewRequest returns fresh random state, nonce and PKCE verifier.
func NewRequest() Request {
	return Request{State: oauth2.GenerateVerifier(), Nonce: oauth2.GenerateVerifier(), Verifier: oauth2.GenerateVerifier()}
}

// AuthCodeURL is where to send the browser for r.
func (p *Provider) AuthCodeURL(r Request) string {
	return p.oauth.AuthCodeURL(r.State, gooidc.Nonce(r.Nonce), oauth2.S256ChallengeOption(r.Verifier))
}

// ErrRefused is what every *Refusal is (errors.Is).
var ErrRefused = errors.New("sign-in refused")

// Refusal is a provider's answer chartctl does not accept. Reason is
// written for the person signing in; Detail (for the log) is the
// library's own error, if any.
type Refusal struct {
	Reason string
	Detail error
}

func (r *Refusal) Error() string {
	if r.Detail != nil {
		return r.Reason + " (" + r.Detail.Error() + ")"
	}
	return r.Reason
}

// Is makes errors.Is(r, ErrRefused) true.
func (r *Refusal) Is(target error) bool { return target == ErrRefused }

func refused(detail error, format string, args ...any) error {
	return &Refusal{Reason: fmt.Sprintf(format, args...), Detail: detail}
}

// Finish exchanges code (with r's PKCE verifier), verifies the ID token
// (signature, iss, aud, exp, r's nonce) and returns its person. Refusals
// are *Refusal.
func (p *Provider) Finish(ctx context.Context, r Request, code string) (*identity.Claims, error) {
	if p.cfg.HTTPClient != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, p.cfg.HTTPClient)
	}
	tok, err := p.oauth.Exchange(ctx, code, oauth2.VerifierOption(r.Verifier))
	if err != nil {
		return nil, refused(err, "The identity provider did not accept the sign-in code. Sign in again.")
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, refused(nil, "The identity provider sent no ID token.")
	}
	return p.Verify(ctx, raw, r.Nonce)
}

// Verify checks the raw ID token (signature through the provider's JWKS,
// iss, aud, exp) and that it carries nonce, and returns its person.
func (p *Provider) Verify(ctx context.Context, raw, nonce string) (*identity.Claims, error) {
	if p.cfg.HTTPClient != nil {
		ctx = gooidc.ClientContext(ctx, p.cfg.HTTPClient)
	}
	idt, err := p.verifier.Verify(ctx, raw)
	if err != nil {
		return nil, refused(err, "The identity provider's ID token is not valid (signature, issuer, audience or expiry).")
	}
	// Compared as hashes so the comparison takes the same time whatever
	// the prefix in common.
	if sha256.Sum256([]byte(idt.Nonce)) != sha256.Sum256([]byte(nonce)) || nonce == "" {
		return nil, refused(nil, "The ID token's nonce does not match this sign-in.")
	}
	var c struct {
		Email         string `json:"email"`
		EmailVerified *bool  `json:"email_verified"`
		Name          string `json:"name"`
	}
	if err := idt.Claims(&c); err != nil {
		return nil, refused(err, "The ID token's claims cannot be read.")
	}
	if c.Email == "" {
		return nil, refused(nil, "The ID token has no email: the identity provider must release the email scope to chartctl.")
	}
	verified := c.EmailVerified != nil && *c.EmailVerified
	if c.EmailVerified != nil && !*c.EmailVerified && !p.cfg.AllowUnverifiedEmail {
		return nil, refused(nil, "The identity provider has not verified the email %s. Verify it there, or ask an operator about --oidc-allow-unverified-email.", c.Email)
	}
	out := &identity.Claims{Provider: chartctl.ProviderOIDC, Issuer: idt.Issuer, Subject: idt.Subject, Email: c.Email, EmailVerified: verified, Name: c.Name}
	var all map[string]any
	if err := idt.Claims(&all); err == nil {
		// Entra ID leaves the groups out past 200 and names a Graph
		// query instead (overage): signing in with none would drop
		// every group (CONTRACT §18 decision 7).
		if names, ok := all["_claim_names"].(map[string]any); ok && names[p.cfg.GroupsClaim] != nil {
			return nil, refused(nil, "The identity provider left the groups out of the ID token (group overage). Ask an operator to use SCIM, or to filter the groups sent to chartctl.")
		}
		out.Groups = groups(all[p.cfg.GroupsClaim])
	}
	return out, nil
}

// groups reads a groups claim: a list of strings, or one string.
func groups(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, g := range v {
			if s, ok := g.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
