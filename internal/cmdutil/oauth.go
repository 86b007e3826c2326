package cmdutil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/oauth2"

	"github.com/chartctl/chartctl/internal/keyring"
)

// OAuthClientID is the built-in public OAuth client of the command line;
// the server accepts any loopback redirect port for it (RFC 8252).
const OAuthClientID = "chartctl"

// AuthServer is the part of an OAuth authorization server's metadata
// (RFC 8414) that the command line uses.
type AuthServer struct {
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	TokenEndpoint         string `json:"token_endpoint"`
	RevocationEndpoint    string `json:"revocation_endpoint"`
	// DeviceAuthorizationEndpoint is RFC 8628's; "" when the server does
	// not advertise the device grant.
	DeviceAuthorizationEndpoint string `json:"device_authorization_endpoint"`
}

// DiscoverAuthServer reads {server}/.well-known/oauth-authorization-server,
// so that a server whose authorization server lives elsewhere (--auth-url)
// is followed; when the document is missing or unreadable the endpoints
// default to {server}/oauth/authorize and {server}/oauth/token.
func DiscoverAuthServer(ctx context.Context, hc *http.Client, server string) *AuthServer {
	def := &AuthServer{
		AuthorizationEndpoint: server + "/oauth/authorize",
		TokenEndpoint:         server + "/oauth/token",
		RevocationEndpoint:    server + "/oauth/revoke",
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, server+"/.well-known/oauth-authorization-server", nil)
	if err != nil {
		return def
	}
	resp, err := hc.Do(req)
	if err != nil {
		return def
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return def
	}
	var m AuthServer
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<20)).Decode(&m); err != nil {
		return def
	}
	if !isHTTPURL(m.AuthorizationEndpoint) || !isHTTPURL(m.TokenEndpoint) {
		return def
	}
	if !isHTTPURL(m.RevocationEndpoint) {
		m.RevocationEndpoint = def.RevocationEndpoint
	}
	if !isHTTPURL(m.DeviceAuthorizationEndpoint) {
		m.DeviceAuthorizationEndpoint = ""
	}
	return &m
}

func isHTTPURL(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}

// OAuthConfig returns the OAuth client configuration of the command line
// for an authorization server.
func OAuthConfig(as *AuthServer, redirectURL string, scopes []string) *oauth2.Config {
	return &oauth2.Config{
		ClientID: OAuthClientID,
		Endpoint: oauth2.Endpoint{
			AuthURL:       as.AuthorizationEndpoint,
			TokenURL:      as.TokenEndpoint,
			DeviceAuthURL: as.DeviceAuthorizationEndpoint,
			AuthStyle:     oauth2.AuthStyleInParams,
		},
		RedirectURL: redirectURL,
		Scopes:      scopes,
	}
}

// storedTokenSource hands out the stored OAuth token, refreshing it when it
// has expired and storing the rotated token, since the server rotates
// refresh tokens on use and the old one is then worthless.
type storedTokenSource struct {
	mu     sync.Mutex
	base   oauth2.TokenSource
	kr     *keyring.Store
	server string
	cred   keyring.Credential
	last   string
}

// NewStoredTokenSource returns a TokenSource over the OAuth token in cred,
// stored in kr for server. ctx carries the HTTP client for refreshes
// (oauth2.HTTPClient). A refresh the server refuses is an *AuthError.
func NewStoredTokenSource(ctx context.Context, server string, cred *keyring.Credential, kr *keyring.Store) oauth2.TokenSource {
	tokenURL := cred.TokenURL
	if tokenURL == "" {
		tokenURL = server + "/oauth/token"
	}
	cfg := OAuthConfig(&AuthServer{TokenEndpoint: tokenURL}, "", nil)
	tok := &oauth2.Token{AccessToken: cred.AccessToken, RefreshToken: cred.RefreshToken, Expiry: cred.Expiry, TokenType: "Bearer"}
	return &storedTokenSource{
		base:   cfg.TokenSource(ctx, tok),
		kr:     kr,
		server: server,
		cred:   *cred,
		last:   cred.AccessToken,
	}
}

// Token implements oauth2.TokenSource.
func (s *storedTokenSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.base.Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && (re.ErrorCode == "invalid_grant" || re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized) {
			return nil, &AuthError{Err: fmt.Errorf("your session on %s has expired", s.server)}
		}
		if s.cred.RefreshToken == "" {
			return nil, &AuthError{Err: fmt.Errorf("your session on %s has expired", s.server)}
		}
		return nil, fmt.Errorf("refresh the access token: %w", err)
	}
	if t.AccessToken != s.last {
		s.last = t.AccessToken
		s.cred.AccessToken = t.AccessToken
		if t.RefreshToken != "" {
			s.cred.RefreshToken = t.RefreshToken
		}
		s.cred.Expiry = t.Expiry
		c := s.cred
		if _, err := s.kr.Set(s.server, &c); err != nil {
			return nil, fmt.Errorf("store the refreshed token: %w", err)
		}
	}
	return t, nil
}
