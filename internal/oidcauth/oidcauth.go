// Package oidcauth is the command line's side of trusted publishing
// (keyless CI): it finds the CI job's OIDC ID token (a file, the
// CHARTCTL_OIDC_TOKEN variable, or GitHub Actions' token request
// endpoint), exchanges it at the server's POST /v1/oidc/token for a
// short-lived credential of a robot, and keeps that credential for its
// lifetime keyed by a hash of what it was exchanged for (decision 8), so
// several commands of one job exchange once.
package oidcauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/atomicfile"
)

// The environment variables read.
const (
	// EnvToken holds a CI job's OIDC ID token itself (GitLab CI's
	// id_tokens: put it in a variable of the job's choosing).
	EnvToken = "CHARTCTL_OIDC_TOKEN"
	// EnvAudience is the audience to ask GitHub Actions for (default: the
	// server's URL).
	EnvAudience = "CHARTCTL_OIDC_AUDIENCE"
	// EnvRobot is ORG/NAME, when the token matches publishers of several
	// robots.
	EnvRobot = "CHARTCTL_OIDC_ROBOT"
	// EnvActionsURL and EnvActionsToken are set by GitHub Actions in jobs
	// with `permissions: id-token: write`.
	EnvActionsURL   = "ACTIONS_ID_TOKEN_REQUEST_URL"
	EnvActionsToken = "ACTIONS_ID_TOKEN_REQUEST_TOKEN"
)

// CacheFile is the name of the file, in the config directory, that keeps
// exchanged credentials until they expire.
const CacheFile = "oidc-credentials.json"

// minRemaining is how long a cached credential must still live to be
// reused: a command starting with less might see it expire midway.
const minRemaining = time.Minute

// Source says where the subject token comes from.
type Source struct {
	// File is --oidc-token-file ("" when not given).
	File string
	// Audience is the audience asked of GitHub Actions ("": the server's
	// URL).
	Audience string
	Getenv   func(string) string
	// HTTPClient requests GitHub Actions' token (nil: a default).
	HTTPClient *http.Client
}

// env reads the environment; a Source without Getenv sees none.
func (s Source) env(name string) string {
	if s.Getenv == nil {
		return ""
	}
	return s.Getenv(name)
}

// Available reports whether a subject token can be had: a file was
// given, or the environment holds a token or GitHub Actions' request
// endpoint.
func (s Source) Available() bool {
	return s.File != "" || strings.TrimSpace(s.env(EnvToken)) != "" ||
		(s.env(EnvActionsURL) != "" && s.env(EnvActionsToken) != "")
}

// Describe names the source for messages.
func (s Source) Describe() string {
	switch {
	case s.File != "":
		return "--oidc-token-file " + s.File
	case strings.TrimSpace(s.env(EnvToken)) != "":
		return EnvToken
	default:
		return "GitHub Actions' ID token"
	}
}

// identity is what a credential exchanged through s is cached under,
// without fetching anything: the subject token itself for a file or the
// variable, GitHub Actions' per-job request token and the audience
// otherwise (a fresh token is asked for only when nothing is cached).
func (s Source) identity(server string) (string, error) {
	switch {
	case s.File != "":
		tok, err := s.readFile()
		return "token:" + tok, err
	case strings.TrimSpace(s.env(EnvToken)) != "":
		return "token:" + strings.TrimSpace(s.env(EnvToken)), nil
	}
	return "actions:" + s.env(EnvActionsToken) + "\n" + s.audience(server), nil
}

func (s Source) audience(server string) string {
	if s.Audience != "" {
		return s.Audience
	}
	if a := s.env(EnvAudience); a != "" {
		return a
	}
	return server
}

func (s Source) readFile() (string, error) {
	b, err := os.ReadFile(s.File)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("--oidc-token-file %s: no such file", s.File)
		}
		return "", fmt.Errorf("--oidc-token-file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("--oidc-token-file %s is empty", s.File)
	}
	return tok, nil
}

// Subject returns the subject token: the file's, the variable's, or a
// fresh one asked of GitHub Actions for the audience.
func (s Source) Subject(ctx context.Context, server string) (string, error) {
	switch {
	case s.File != "":
		return s.readFile()
	case strings.TrimSpace(s.env(EnvToken)) != "":
		return strings.TrimSpace(s.env(EnvToken)), nil
	}
	return s.requestActionsToken(ctx, s.audience(server))
}

// requestActionsToken asks GitHub Actions for an ID token with audience
// aud, as actions/core's getIDToken does.
func (s Source) requestActionsToken(ctx context.Context, aud string) (string, error) {
	raw := s.env(EnvActionsURL)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%s is not a URL", EnvActionsURL)
	}
	q := u.Query()
	q.Set("audience", aud)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+s.env(EnvActionsToken))
	req.Header.Set("Accept", "application/json")
	hc := s.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("request an ID token from GitHub Actions: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GitHub Actions refused an ID token (HTTP %d): give the job `permissions: id-token: write`", resp.StatusCode)
	}
	var out struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Value == "" {
		return "", fmt.Errorf("GitHub Actions answered no ID token")
	}
	return out.Value, nil
}

// Cache keeps exchanged credentials in a file only the user can read,
// until they expire.
type Cache struct {
	// Dir is the config directory.
	Dir string
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	mu sync.Mutex
}

type cached struct {
	Token  string    `json:"token"`
	Expiry time.Time `json:"expiry"`
}

func (c *Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Cache) path() string { return filepath.Join(c.Dir, CacheFile) }

func (c *Cache) read() map[string]cached {
	all := map[string]cached{}
	b, err := os.ReadFile(c.path())
	if err == nil {
		// A damaged file is as good as an empty one: every entry can be
		// exchanged again.
		_ = json.Unmarshal(b, &all)
	}
	return all
}

// get returns the credential cached under key that lives at least
// minRemaining more.
func (c *Cache) get(key string) (cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.read()[key]
	return e, ok && e.Expiry.Sub(c.now()) >= minRemaining
}

// put caches a credential under key, dropping expired ones.
func (c *Cache) put(key string, e cached) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	all := c.read()
	now := c.now()
	for k, v := range all {
		if !v.Expiry.After(now) {
			delete(all, k)
		}
	}
	all[key] = e
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return fmt.Errorf("keep the exchanged credential: %w", err)
	}
	if err := atomicfile.Write(c.path(), b, 0o600); err != nil {
		return fmt.Errorf("keep the exchanged credential: %w", err)
	}
	return nil
}

// Credential is an exchanged credential.
type Credential struct {
	Token  string
	Expiry time.Time
	// Cached is true when it came from the cache, not a new exchange.
	Cached bool
}

// Exchange returns a credential of server for src: one cached for the
// same subject (and robot) while it lives, else the result of a new
// exchange, which is cached. robot is ORG/NAME or "" (then EnvRobot).
func Exchange(ctx context.Context, hc *http.Client, server, robot string, src Source, cache *Cache) (*Credential, error) {
	if robot == "" {
		robot = src.env(EnvRobot)
	}
	id, err := src.identity(server)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(server + "\n" + robot + "\n" + id))
	key := hex.EncodeToString(sum[:])
	if e, ok := cache.get(key); ok {
		return &Credential{Token: e.Token, Expiry: e.Expiry, Cached: true}, nil
	}
	subject, err := src.Subject(ctx, server)
	if err != nil {
		return nil, err
	}
	start := cache.now()
	tok, err := client.ExchangeOIDCToken(ctx, hc, server, subject, robot)
	if err != nil {
		return nil, err
	}
	e := cached{Token: tok.AccessToken, Expiry: start.Add(time.Duration(tok.ExpiresIn) * time.Second).UTC()}
	if err := cache.put(key, e); err != nil {
		return nil, err
	}
	return &Credential{Token: e.Token, Expiry: e.Expiry}, nil
}
