package cmdutil

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/oauth2"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/oidcauth"
)

// OIDCSource is where a CI job's OIDC ID token comes from: file
// (--oidc-token-file, "" for none), else the environment
// (CHARTCTL_OIDC_TOKEN, GitHub Actions' token request endpoint). audience
// is what to ask GitHub Actions for ("": CHARTCTL_OIDC_AUDIENCE, else the
// server's URL).
func (f *Factory) OIDCSource(file, audience string) oidcauth.Source {
	return oidcauth.Source{File: file, Audience: audience, Getenv: f.Getenv, HTTPClient: f.httpClient()}
}

// ExchangeOIDC exchanges src's token at server for a robot's short-lived
// credential (trusted publishing), reusing one this user's earlier
// command exchanged for the same token while it lives. robot is ORG/NAME
// or "".
func (f *Factory) ExchangeOIDC(ctx context.Context, server, robot string, src oidcauth.Source) (*oidcauth.Credential, error) {
	dir, err := f.ConfigDir()
	if err != nil {
		return nil, err
	}
	cred, err := oidcauth.Exchange(ctx, f.httpClient(), server, robot, src, &oidcauth.Cache{Dir: dir})
	var te *client.TokenExchangeError
	if errors.As(err, &te) {
		return nil, &HintError{Err: &AuthError{Err: fmt.Errorf("%s refused the OIDC token from %s: %s", server, src.Describe(), te.Description)},
			Hint: "Check the robot's trusted publishers: chartctl robot publisher list ROBOT --org ORG (docs/ci.md)."}
	}
	return cred, err
}

// ClientOrOIDC is Client, except that when no credential is configured
// (--token, CHARTCTL_TOKEN, a live stored login) and a CI job's OIDC
// token is at hand (oidcauth.Source.Available), it exchanges that token
// for a robot's credential and sends that: a pipeline then needs no
// secret at all.
func (f *Factory) ClientOrOIDC(ctx context.Context) (*client.Client, error) {
	server, err := f.Server()
	if err != nil {
		return nil, err
	}
	ts, _, err := f.Token(ctx, server)
	if err != nil {
		return nil, err
	}
	src := f.OIDCSource("", "")
	if ts != nil || !src.Available() {
		return f.Client()
	}
	cred, err := f.ExchangeOIDC(ctx, server, "", src)
	if err != nil {
		return nil, err
	}
	return f.newClient(server, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: cred.Token, TokenType: "Bearer", Expiry: cred.Expiry}))
}
