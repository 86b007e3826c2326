package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// Defaults of a new Client.
const (
	// DefaultUserAgent is the User-Agent sent unless WithUserAgent says otherwise.
	DefaultUserAgent = "chartctl-go"
	// DefaultMaxRetries is how many times a failed request is retried.
	DefaultMaxRetries = 3
	// DefaultMaxWait is the longest single wait the client sleeps through
	// before a retry; a longer one (a Retry-After of ten minutes, say) is
	// returned to the caller as an error instead.
	DefaultMaxWait = time.Minute
	// DefaultMaxTotalWait bounds the sum of all waits of one call.
	DefaultMaxTotalWait = 2 * time.Minute

	// retryBase and retryCap shape the exponential backoff: the n-th retry
	// (from 0) waits a random duration in [0, min(retryCap, retryBase*2^n)).
	retryBase = 500 * time.Millisecond
	retryCap  = 30 * time.Second

	// maxErrorBody bounds how much of an error response is read.
	maxErrorBody = 1 << 20
)

// Client talks to one chartctl server. Create it with New; it is safe for
// concurrent use. Each group of endpoints is a service field.
type Client struct {
	// BaseURL is the server's address; API paths are resolved against it,
	// so it always ends in a slash.
	BaseURL *url.URL
	// UserAgent is sent with every request.
	UserAgent string

	client       *http.Client
	tokenSource  oauth2.TokenSource
	maxRetries   int
	maxWait      time.Duration
	maxTotalWait time.Duration
	retryHook    func(RetryEvent)

	// Injectable for tests: sleep waits d or until ctx is done, jitter
	// returns a random duration in [0, n).
	sleep  func(ctx context.Context, d time.Duration) error
	jitter func(n time.Duration) time.Duration

	// common is shared by the services, which are views of it.
	common service

	// Repositories manages chart repositories.
	Repositories *RepositoriesService
	// Charts lists, uploads, downloads and deletes chart versions.
	Charts *ChartsService
	// Teams manages teams and their members.
	Teams *TeamsService
	// Organizations lists, creates and deletes organizations.
	Organizations *OrganizationsService
	// Robots manages organizations' robot accounts.
	Robots *RobotsService
	// Trust manages the trust material of repositories and organizations.
	Trust *TrustService
	// Search finds charts across repositories.
	Search *SearchService
	// APIKeys manages the caller's API keys.
	APIKeys *APIKeysService
	// RateLimit reports the caller's rate limits.
	RateLimit *RateLimitService
	// Users reads the caller's account and, for server admins, creates users.
	Users *UsersService
	// OAuthClients registers OAuth clients (server admins only).
	OAuthClients *OAuthClientsService
	// Webhooks manages webhooks and their deliveries.
	Webhooks *WebhooksService
	// Replications manages replications (CONTRACT §18).
	Replications *ReplicationsService
	// Audit reads the audit log.
	Audit *AuditService
	// Admin runs server maintenance: backups, verification, garbage
	// collection (server admins only).
	Admin *AdminService
}

// service is embedded by every service to reach the client.
type service struct {
	client *Client
}

// RetryEvent describes a retry about to happen, for WithRetryHook.
type RetryEvent struct {
	// Method and URL identify the request.
	Method string
	URL    string
	// Attempt is the number of the retry about to be made, from 1.
	Attempt int
	// Wait is how long the client sleeps before it.
	Wait time.Duration
	// Err is why: an *Error (429, 5xx) or a connection error.
	Err error
}

// Option configures a Client in New.
type Option func(*Client) error

// WithHTTPClient makes the client send its requests through hc (its
// Transport, timeout and cookie jar). hc is not modified: the client uses a
// copy whose Transport adds the credential.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("nil http.Client")
		}
		cp := *hc
		c.client = &cp
		return nil
	}
}

// WithToken authenticates every request to the server with a static bearer
// token (an API key or an access token).
func WithToken(token string) Option {
	return func(c *Client) error {
		if token == "" {
			return errors.New("empty token")
		}
		c.tokenSource = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token, TokenType: "Bearer"})
		return nil
	}
}

// WithTokenSource authenticates every request with a token from ts, such as
// an oauth2.Config's TokenSource, which refreshes an expired access token.
// Tokens are cached until they expire.
func WithTokenSource(ts oauth2.TokenSource) Option {
	return func(c *Client) error {
		if ts == nil {
			return errors.New("nil token source")
		}
		c.tokenSource = oauth2.ReuseTokenSource(nil, ts)
		return nil
	}
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option {
	return func(c *Client) error {
		c.UserAgent = ua
		return nil
	}
}

// WithMaxRetries sets how many times a failed request is retried (0
// disables retries). The default is DefaultMaxRetries.
func WithMaxRetries(n int) Option {
	return func(c *Client) error {
		if n < 0 {
			return fmt.Errorf("max retries %d is negative", n)
		}
		c.maxRetries = n
		return nil
	}
}

// WithMaxWait sets the longest single wait before a retry. When the server
// asks for a longer one (Retry-After), the call returns the *Error at once,
// with RetryAfter set, rather than sleep. The default is DefaultMaxWait.
func WithMaxWait(d time.Duration) Option {
	return func(c *Client) error {
		if d < 0 {
			return fmt.Errorf("max wait %v is negative", d)
		}
		c.maxWait = d
		return nil
	}
}

// WithMaxTotalWait bounds the sum of the waits of one call; a retry that
// would exceed it is not made. The default is DefaultMaxTotalWait.
func WithMaxTotalWait(d time.Duration) Option {
	return func(c *Client) error {
		if d < 0 {
			return fmt.Errorf("max total wait %v is negative", d)
		}
		c.maxTotalWait = d
		return nil
	}
}

// WithRetryHook registers f, called before every retry (from the calling
// goroutine), so a command can tell its user why it is waiting.
func WithRetryHook(f func(RetryEvent)) Option {
	return func(c *Client) error {
		c.retryHook = f
		return nil
	}
}

// New returns a client for the server at baseURL (such as
// "https://charts.example.com"; a path prefix is kept).
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("chartctl: parse base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("chartctl: base URL %q: scheme must be http or https", baseURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("chartctl: base URL %q has no host", baseURL)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("chartctl: base URL %q must not carry credentials, a query or a fragment", baseURL)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	c := &Client{
		BaseURL:      u,
		UserAgent:    DefaultUserAgent,
		client:       &http.Client{},
		maxRetries:   DefaultMaxRetries,
		maxWait:      DefaultMaxWait,
		maxTotalWait: DefaultMaxTotalWait,
		sleep:        sleepContext,
		jitter:       randomDuration,
	}
	for _, opt := range opts {
		if err := opt(c); err != nil {
			return nil, fmt.Errorf("chartctl: %w", err)
		}
	}
	if c.tokenSource != nil {
		c.client.Transport = &authTransport{
			base:   c.client.Transport,
			origin: origin(u),
			source: c.tokenSource,
		}
	}
	c.common.client = c
	c.Repositories = (*RepositoriesService)(&c.common)
	c.Charts = (*ChartsService)(&c.common)
	c.Teams = (*TeamsService)(&c.common)
	c.Organizations = (*OrganizationsService)(&c.common)
	c.Robots = (*RobotsService)(&c.common)
	c.Trust = (*TrustService)(&c.common)
	c.Search = (*SearchService)(&c.common)
	c.APIKeys = (*APIKeysService)(&c.common)
	c.RateLimit = (*RateLimitService)(&c.common)
	c.Users = (*UsersService)(&c.common)
	c.OAuthClients = (*OAuthClientsService)(&c.common)
	c.Webhooks = (*WebhooksService)(&c.common)
	c.Replications = (*ReplicationsService)(&c.common)
	c.Audit = (*AuditService)(&c.common)
	c.Admin = (*AdminService)(&c.common)
	return c, nil
}

// NewRequest returns a request for urlStr, a path relative to BaseURL
// (without a leading slash, such as "v1/repositories"). A non-nil body is
// encoded as JSON; the request can be sent again, so it is retryable.
func (c *Client) NewRequest(method, urlStr string, body any) (*http.Request, error) {
	var buf []byte
	if body != nil {
		var err error
		buf, err = json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("chartctl: encode request body: %w", err)
		}
	}
	var r io.Reader
	if buf != nil {
		// A *bytes.Reader makes http.NewRequest set GetBody and ContentLength.
		r = bytes.NewReader(buf)
	}
	req, err := c.newRequest(method, urlStr, r)
	if err != nil {
		return nil, err
	}
	if buf != nil {
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	return req, nil
}

// newRequest resolves urlStr and sets the common headers.
func (c *Client) newRequest(method, urlStr string, body io.Reader) (*http.Request, error) {
	if strings.HasPrefix(urlStr, "/") {
		return nil, fmt.Errorf("chartctl: path %q must be relative to the base URL", urlStr)
	}
	u, err := c.BaseURL.Parse(urlStr)
	if err != nil {
		return nil, fmt.Errorf("chartctl: parse path %q: %w", urlStr, err)
	}
	req, err := http.NewRequest(method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("chartctl: new request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	return req, nil
}

// Do sends req, retrying as described in the package documentation, and
// decodes the `data` member of a successful answer into v (a pointer), or
// copies the raw body into v when v is an io.Writer. An answer other than
// 2xx is returned as an *Error. The Response is returned whenever the
// server answered, also with an error.
func (c *Client) Do(ctx context.Context, req *http.Request, v any) (*Response, error) {
	if ctx == nil {
		return nil, errors.New("chartctl: nil context")
	}
	req = req.WithContext(ctx)
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		if attempt > 0 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, fmt.Errorf("chartctl: rewind request body: %w", err)
			}
			req = req.Clone(ctx)
			req.Body = body
		}
		resp, err := c.client.Do(req)
		var response *Response
		var wait time.Duration
		retry := false
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, fmt.Errorf("chartctl: %s %s: %w", req.Method, req.URL.Redacted(), ctxErr)
			}
			err = fmt.Errorf("chartctl: %s %s: %w", req.Method, req.URL.Redacted(), err)
			retry = replayable && idempotent(req.Method) && droppedConnection(err)
			wait = c.backoff(attempt)
		} else {
			response = newResponse(resp)
			if err = CheckResponse(resp); err == nil {
				defer resp.Body.Close()
				meta, err := decodeBody(resp.Body, v)
				response.Meta = meta
				if err != nil && !jsonMediaType(resp.Header.Get("Content-Type")) {
					// A web page where the API should be: the base URL
					// is not a chartctl server's (or a proxy answered).
					ctype := resp.Header.Get("Content-Type")
					if ctype == "" {
						ctype = "no content type"
					}
					err = &NotAPIError{URL: req.URL.Redacted(), ContentType: ctype}
				}
				return response, err
			}
			drainAndClose(resp.Body)
			var apiErr *Error
			errors.As(err, &apiErr)
			switch {
			case resp.StatusCode == http.StatusTooManyRequests:
				// The contract guarantees a refused request was not executed,
				// so any request may be sent again if its body can be.
				retry = replayable
			case retryableStatus(resp.StatusCode):
				retry = replayable && idempotent(req.Method)
			}
			wait = apiErr.RetryAfter
			if wait <= 0 {
				wait = c.backoff(attempt)
			}
		}
		if !retry || attempt >= c.maxRetries {
			return response, err
		}
		if wait > c.maxWait || waited+wait > c.maxTotalWait {
			return response, err
		}
		if c.retryHook != nil {
			c.retryHook(RetryEvent{Method: req.Method, URL: req.URL.Redacted(), Attempt: attempt + 1, Wait: wait, Err: err})
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return response, fmt.Errorf("chartctl: waiting to retry: %w (after: %w)", serr, err)
		}
		waited += wait
	}
}

// ErrNotAPI is what a NotAPIError matches with errors.Is.
var ErrNotAPI = errors.New("the answer is not the chartctl API's JSON")

// NotAPIError is a successful answer that is not the API's JSON (a web
// page, a proxy's sign-in page): the client's base URL is not the address
// of a chartctl server.
type NotAPIError struct {
	// URL is the request's URL, without credentials.
	URL string
	// ContentType is the answer's Content-Type.
	ContentType string
}

// Error implements error.
func (e *NotAPIError) Error() string {
	return fmt.Sprintf("chartctl: %s answered with %s, not the chartctl API's JSON", e.URL, e.ContentType)
}

// Is reports whether target is ErrNotAPI.
func (e *NotAPIError) Is(target error) bool { return target == ErrNotAPI }

// jsonMediaType reports whether a Content-Type is JSON (application/json
// or a +json type).
func jsonMediaType(ctype string) bool {
	mt, _, err := mime.ParseMediaType(ctype)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// backoff returns the full-jitter wait before retry number attempt+1.
func (c *Client) backoff(attempt int) time.Duration {
	ceiling := retryCap
	if attempt < 16 {
		if d := retryBase << attempt; d < ceiling {
			ceiling = d
		}
	}
	return c.jitter(ceiling)
}

// decodeBody decodes a success envelope's data into v, or copies the body
// into v when it is an io.Writer.
func decodeBody(body io.Reader, v any) (*Meta, error) {
	if w, ok := v.(io.Writer); ok {
		if _, err := io.Copy(w, body); err != nil {
			return nil, fmt.Errorf("chartctl: read response body: %w", err)
		}
		return nil, nil
	}
	var env envelope
	if v == nil {
		// Nothing is expected (a delete): any body, even none, will do.
		_ = json.NewDecoder(body).Decode(&env)
		_, _ = io.Copy(io.Discard, body)
		return env.Meta, nil
	}
	if err := json.NewDecoder(body).Decode(&env); err != nil {
		return nil, fmt.Errorf("chartctl: decode response: %w", err)
	}
	if len(env.Data) == 0 {
		return env.Meta, nil
	}
	if err := json.Unmarshal(env.Data, v); err != nil {
		return env.Meta, fmt.Errorf("chartctl: decode response data: %w", err)
	}
	return env.Meta, nil
}

// envelope is the shape of every successful JSON answer.
type envelope struct {
	Data json.RawMessage `json:"data"`
	Meta *Meta           `json:"meta"`
}

// drainAndClose reads a little of body, so the connection can be reused,
// and closes it.
func drainAndClose(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	_ = body.Close()
}

// idempotent reports whether a request with this method may be sent twice.
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

// retryableStatus reports whether a server error status is worth a retry.
func retryableStatus(status int) bool {
	switch status {
	case http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// sleepContext waits d or until ctx is done.
func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// randomDuration returns a random duration in [0, n).
func randomDuration(n time.Duration) time.Duration {
	if n <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(n)))
}

// parseRetryAfter reads a Retry-After header: delay seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
