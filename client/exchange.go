package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// TokenExchangeError is a refused token exchange: the RFC 8693 §2.2.2
// error of POST /v1/oidc/token (or its 429).
type TokenExchangeError struct {
	StatusCode int
	// Code is the OAuth error code (invalid_request, invalid_target,
	// unsupported_grant_type, rate_limit_exceeded).
	Code string
	// Description names the check that failed, for a person.
	Description string
	// RetryAfter is the wait a 429 asked for.
	RetryAfter time.Duration
}

func (e *TokenExchangeError) Error() string {
	if e.Description == "" {
		return fmt.Sprintf("token exchange refused: %s (HTTP %d)", e.Code, e.StatusCode)
	}
	return "token exchange refused: " + e.Description
}

// ExchangeOIDCToken exchanges a CI job's OIDC ID token (subjectToken) at
// the server at baseURL for a short-lived credential of the robot whose
// trusted publisher the token matches (POST /v1/oidc/token, RFC 8693).
// robot (ORG/NAME) chooses when several robots' publishers match; ""
// otherwise. hc nil means http.DefaultClient. The credential is a bearer
// token for New's WithToken, Helm and OCI clients alike, valid for
// ExpiresIn seconds (at most 900). A refusal is a *TokenExchangeError.
func ExchangeOIDCToken(ctx context.Context, hc *http.Client, baseURL, subjectToken, robot string) (*ExchangedToken, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	u, err := url.Parse(strings.TrimSuffix(baseURL, "/") + "/v1/oidc/token")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("chartctl: base URL %q: use an absolute http(s) URL", baseURL)
	}
	form := url.Values{
		"grant_type":         {TokenExchangeGrantType},
		"subject_token":      {subjectToken},
		"subject_token_type": {TokenTypeIDToken},
	}
	if robot != "" {
		form.Set("robot", robot)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("chartctl: read the token exchange's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		e := &TokenExchangeError{StatusCode: resp.StatusCode, RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
		var oe struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(body, &oe) == nil && oe.Error != "" {
			e.Code, e.Description = oe.Error, oe.Description
		} else {
			// Not the endpoint's answer (a proxy's page, an old server):
			// say what came back.
			e.Code = http.StatusText(resp.StatusCode)
			if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
				e.Description = fmt.Sprintf("%s does not offer trusted publishing (POST /v1/oidc/token answered %d); is it a chartctl server of a recent version?", baseURL, resp.StatusCode)
			}
		}
		return nil, e
	}
	var tok ExchangedToken
	if err := json.Unmarshal(body, &tok); err != nil || tok.AccessToken == "" {
		return nil, fmt.Errorf("chartctl: the token exchange's answer is not a token")
	}
	return &tok, nil
}
