package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/clientip"
	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/token"
)

// Rate-limit bucket names (§7).
const (
	bucketGlobal = "global"
	bucketUpload = "upload"
	bucketSearch = "search"
	bucketKeys   = app.BucketKeys
)

// uploadRoutes are the routes whose bodies may take UploadTimeout to
// arrive; every other body gets BodyTimeout.
var uploadRoutes = map[string]bool{
	"/v1/repositories/:repo/charts": true,
	"/helm/api/:repo/charts":        true,
}

// observe is the middleware every request passes through, outermost: it
// sets X-Request-Id, bounds the body's arrival, keeps the audit log of
// writes (audit), turns a panic or an error into the response, and then
// counts the request in the metrics and logs it. It is one middleware
// rather than five because echo wraps each middleware around the handler
// anew on every request, and every wrapping is an allocation on the
// hottest path there is.
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		start := s.Now()
		rid := setRequestID(c)
		s.bodyDeadline(c)
		defer func() {
			if r := recover(); r != nil {
				s.Logger.Error("panic", "request_id", rid, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = fmt.Errorf("panic: %v", r)
			}
			if err != nil {
				// The error handler writes the response, so the status
				// counted and logged is the one sent.
				c.Error(err)
				err = nil
			}
			// A refused request's body is not waited for (a 401 to a
			// trickled upload frees the connection at once).
			httpx.ReleaseBody(c)
			elapsed := s.Now().Sub(start)
			s.metrics.observe(s.routeLabel(c.Path()), methodLabel(c.Request().Method), c.Response().Status, elapsed)
			s.logRequest(c, rid, elapsed)
		}()
		return s.audit(c, next)
	}
}

// bodyDeadline gives a request's body a short deadline unless the route
// receives uploads, so a client trickling a body cannot hold a handler
// (and its memory) for the upload's generous bound. Upload bodies must
// keep the minimum upload rate instead (when it is on).
func (s *Server) bodyDeadline(c echo.Context) {
	req := c.Request()
	if req.ContentLength == 0 {
		return
	}
	httpx.TrackBody(c)
	if isUpload(c) {
		httpx.LimitRate(c, s.Config.UploadMinRate)
		return
	}
	if s.Config.BodyTimeout > 0 && !strings.HasPrefix(c.Path(), "/v2/") {
		_ = http.NewResponseController(c.Response()).SetReadDeadline(time.Now().Add(s.Config.BodyTimeout))
	}
}

// isUpload reports whether a request sends an upload: a chart to /v1 or
// the ChartMuseum API, or a blob or manifest to /v2 (other /v2 bodies,
// such as a DELETE's, keep the registry's idle timeout).
func isUpload(c echo.Context) bool {
	m := c.Request().Method
	if uploadRoutes[c.Path()] {
		return m == http.MethodPost
	}
	return strings.HasPrefix(c.Path(), "/v2/") && (m == http.MethodPost || m == http.MethodPatch || m == http.MethodPut)
}

// TakeUpload reserves one of p's concurrent uploads
// (--max-concurrent-uploads); it implements httpx.UploadGate for the
// protocols mounted beside /v1.
func (s *Server) TakeUpload(c echo.Context, p *chartctl.Principal) (func(), error) {
	return s.uploads.TakeUpload(c, p)
}

// headerRequestID is X-Request-Id in canonical form, for direct
// assignment.
var headerRequestID = http.CanonicalHeaderKey(echo.HeaderXRequestID)

// setRequestID sets X-Request-Id on the response, echoing a sane one the
// client sent, and returns it.
func setRequestID(c echo.Context) string {
	rid := c.Request().Header.Get(echo.HeaderXRequestID)
	if !saneRequestID(rid) {
		rid = newRequestID()
	}
	c.Response().Header()[headerRequestID] = []string{rid}
	return rid
}

// requestIDs makes request IDs: 24 hexadecimal digits, the first 12 drawn
// at random when the process starts (so replicas and restarts differ),
// the last 12 a counter. An ID names a request in logs; it grants
// nothing (a client may send its own), so it needs to be unique, not
// unpredictable, and a counter costs a fraction of a random read on
// every request.
var requestIDs = struct {
	prefix [6]byte
	n      atomic.Uint64
}{prefix: randomPrefix()}

// randomPrefix returns six random bytes.
func randomPrefix() (b [6]byte) {
	_, _ = rand.Read(b[:])
	return b
}

// newRequestID returns the next request ID: the prefix and the low six
// bytes of the counter, in hexadecimal.
func newRequestID() string {
	n := requestIDs.n.Add(1)
	var raw [12]byte
	copy(raw[:6], requestIDs.prefix[:])
	binary.BigEndian.PutUint16(raw[6:8], uint16(n>>32))
	binary.BigEndian.PutUint32(raw[8:], uint32(n))
	var b [24]byte
	hex.Encode(b[:], raw[:])
	return string(b[:])
}

func saneRequestID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		r := s[i]
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// logRequest logs a finished request. Successful reads are logged at
// debug level: at thousands of index.yaml fetches a second an access log
// costs more than the fetches. Writes, errors and slow requests stay at
// info.
func (s *Server) logRequest(c echo.Context, rid string, elapsed time.Duration) {
	req, resp := c.Request(), c.Response()
	level := slog.LevelInfo
	if m := req.Method; (m == http.MethodGet || m == http.MethodHead) && resp.Status < 400 && elapsed < time.Second {
		level = slog.LevelDebug
	}
	if !s.Logger.Enabled(req.Context(), level) {
		return
	}
	s.Logger.LogAttrs(req.Context(), level, "request",
		slog.String("method", req.Method),
		slog.String("path", req.URL.Path),
		slog.Int("status", resp.Status),
		slog.Int64("bytes", resp.Size),
		slog.Duration("duration", elapsed),
		slog.String("request_id", rid),
	)
}

// clientIP is the caller's address: the connection's, or the forwarded one
// when the peer is a trusted proxy.
func (s *Server) clientIP(c echo.Context) string {
	return clientip.BucketKey(s.Config.TrustedProxies.ClientIP(c.Request()))
}

// authenticate resolves the bearer credential into a Principal, or answers
// 401. Failed attempts are throttled per client IP.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p, err := s.authenticateRequest(c)
		if err != nil {
			return err
		}
		httpx.SetPrincipal(c, p)
		return next(c)
	}
}

func (s *Server) authenticateRequest(c echo.Context) (*chartctl.Principal, error) {
	auth := c.Request().Header.Get("Authorization")
	if auth == "" {
		if err := s.checkThrottle(c); err != nil {
			return nil, err
		}
		return nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "Authentication required: send Authorization: Bearer <API key or access token>.")
	}
	tok, ok := bearerToken(auth)
	malformed := ""
	if !ok {
		malformed = "Malformed Authorization header: use Bearer <token>."
	}
	return s.resolveCredential(c, "", tok, malformed, `Bearer realm="chartctl", error="invalid_token"`)
}

// OptionalPrincipal resolves the credential of a request to a protocol
// where credentials are optional (the Helm repository, the registry): HTTP
// Basic with the token as password, or Bearer; nil, nil when none was sent.
// It implements httpx.Authenticator.
func (s *Server) OptionalPrincipal(c echo.Context, challenge string) (*chartctl.Principal, error) {
	h := c.Request().Header.Get("Authorization")
	if h == "" {
		return nil, nil
	}
	var user, tok, malformed string
	scheme, rest, _ := strings.Cut(h, " ")
	switch {
	case strings.EqualFold(scheme, "Basic"):
		if raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest)); err != nil {
			malformed = "Malformed Basic credentials."
		} else {
			user, tok, _ = strings.Cut(string(raw), ":")
		}
	case strings.EqualFold(scheme, "Bearer"):
		tok = strings.TrimSpace(rest)
	default:
		malformed = "Unsupported Authorization scheme: use Basic or Bearer."
	}
	return s.resolveCredential(c, user, tok, malformed, challenge)
}

// checkThrottle refuses a client whose failed authentications exceeded
// the throttle, with 429 and Retry-After.
func (s *Server) checkThrottle(c echo.Context) error {
	// With no failure on record nobody is blocked: skip working out the
	// client's address, which costs allocations on every credentialed
	// request.
	if l, ok := s.throttle.(interface{ Len() int }); ok && l.Len() == 0 {
		return nil // (a shared throttle cannot tell without asking)
	}
	if blocked, wait := s.throttle.Blocked(s.clientIP(c)); blocked {
		httpx.SetRetryAfter(c, wait)
		return chartctl.Errorf(chartctl.ERATELIMIT, "Too many failed authentication attempts; retry in %d seconds.", httpx.RetrySeconds(wait))
	}
	return nil
}

// resolveCredential turns a credential the client sent into a Principal,
// for every way one arrives (Bearer on /v1, Basic or Bearer on /helm). A
// throttled client is refused first; a malformed header (malformed is its
// message) or a refused credential counts as a failure for the client's
// address and answers 401 with the challenge as WWW-Authenticate. user is
// the Basic user name ("" for Bearer): when it names a robot account
// (robot$ORG+NAME) the secret must be that robot's.
func (s *Server) resolveCredential(c echo.Context, user, tok, malformed, challenge string) (*chartctl.Principal, error) {
	if err := s.checkThrottle(c); err != nil {
		return nil, err
	}
	var (
		p   *chartctl.Principal
		err error
	)
	if malformed != "" {
		err = chartctl.Errorf(chartctl.EUNAUTHORIZED, "%s", malformed)
	} else {
		p, err = s.principal(c.Request().Context(), tok)
		if err == nil {
			err = checkRobotUserName(user, p)
			if err != nil {
				p = nil
			}
		}
	}
	if chartctl.ErrorCode(err) == chartctl.EUNAUTHORIZED {
		s.throttle.Fail(s.clientIP(c))
		c.Response().Header().Set("WWW-Authenticate", challenge)
	}
	if p != nil {
		setActor(c, p)
	}
	return p, err
}

// checkRobotUserName refuses a Basic user name that names a robot account
// (robot$ORG+NAME) with a secret that is not that robot's: a valid secret
// of another robot, or a person's key, under that name is a mix-up, not a
// login. Other user names are not checked (Helm clients send any).
func checkRobotUserName(user string, p *chartctl.Principal) error {
	if !strings.HasPrefix(user, chartctl.RobotUserNamePrefix) {
		return nil
	}
	org, name, ok := chartctl.ParseRobotUserName(user)
	if !ok {
		return chartctl.Errorf(chartctl.EUNAUTHORIZED, "Malformed robot user name %q: use robot$ORG+NAME (quote it in shells: 'robot$acme+ci-push').", user)
	}
	if p.Robot == nil || p.Robot.Organization != org || p.Robot.Name != name {
		return chartctl.Errorf(chartctl.EUNAUTHORIZED, "This secret does not belong to robot account %s/%s: send that robot's secret as the password.", org, name)
	}
	return nil
}

func bearerToken(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// principal resolves a credential value. API keys with a bad checksum are
// refused without a store lookup.
func (s *Server) principal(ctx context.Context, value string) (*chartctl.Principal, error) {
	now := s.Now()
	switch {
	case strings.HasPrefix(value, token.RobotSecretPrefix):
		return s.robotPrincipal(ctx, value, now)
	case strings.HasPrefix(value, token.ExchangedPrefix):
		return s.exchangedPrincipal(ctx, value, now)
	}
	if token.Valid(token.APIKeyPrefix, value) {
		h := token.Hash(value)
		if p, keyID, ok := s.creds.get(h, now); ok {
			s.touch.record(keyID, now)
			return p, nil
		}
		gen := s.creds.generation()
		key, err := s.Store.APIKeyByHash(ctx, h)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "Invalid or revoked API key.")
		} else if err != nil {
			return nil, err
		}
		if key.Expired(now) {
			return nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "This API key expired; create a new one.")
		}
		p, err := s.principalFor(ctx, key.UserID, key.ID, key.Scopes)
		if err != nil {
			return nil, err
		}
		// nil unless the key names repositories: an empty non-nil list
		// would limit the key to none.
		if len(key.Repositories) > 0 {
			p.Repositories = key.Repositories
		}
		s.creds.put(h, gen, p, key.ID, key.ExpiresAt, now)
		s.touch.record(key.ID, now)
		return p, nil
	}
	if s.AccessTokens != nil && strings.HasPrefix(value, token.AccessTokenPrefix) && token.Valid(token.AccessTokenPrefix, value) {
		userID, grantID, clientID, scopes, err := s.AccessTokens.VerifyAccessToken(ctx, value)
		if err != nil {
			return nil, err
		}
		p, err := s.principalFor(ctx, userID, grantID, scopes)
		if err != nil {
			return nil, err
		}
		p.OAuth, p.OAuthClient = true, clientID
		return p, nil
	}
	return nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "Invalid credential: expected an API key (chartctl_…) or an OAuth access token.")
}

// robotPrincipal resolves a robot account's secret: refused when the robot
// is disabled or expired, or the secret is one a rotation replaced and its
// grace is over. Resolved secrets are cached as keys are, never past the
// robot's expiry or the replaced secret's grace; a change to the robot
// through this server drops the cache at once (other replicas: when the
// store tells them, else within credentialTTL).
func (s *Server) robotPrincipal(ctx context.Context, value string, now time.Time) (*chartctl.Principal, error) {
	if !token.Valid(token.RobotSecretPrefix, value) {
		return nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "Malformed robot secret: copy the whole value chartctl robot create or rotate printed.")
	}
	return s.cachedRobotPrincipal(value, now, func(h []byte) (*chartctl.Principal, *time.Time, error) {
		rb, err := s.Store.RobotBySecretHash(ctx, h)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return nil, nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "Invalid robot secret: the robot account was deleted or its secret rotated; ask an owner of its organization for the current one.")
		} else if err != nil {
			return nil, nil, err
		}
		until, err := app.CheckRobotSecret(rb, h, now)
		if err != nil {
			return nil, nil, err
		}
		return app.RobotPrincipal(rb, rb.ID), until, nil
	})
}

// exchangedPrincipal resolves a credential exchanged for a trusted
// publisher's token (/v1/oidc/token): it acts as its robot, with the
// robot's checks, until it expires (at most 15 minutes). Cached as
// robotPrincipal does, never past its expiry.
func (s *Server) exchangedPrincipal(ctx context.Context, value string, now time.Time) (*chartctl.Principal, error) {
	if !token.Valid(token.ExchangedPrefix, value) {
		return nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "Malformed exchanged credential: copy the whole access_token /v1/oidc/token returned.")
	}
	return s.cachedRobotPrincipal(value, now, func(h []byte) (*chartctl.Principal, *time.Time, error) {
		ec, err := s.Store.ExchangedCredentialByHash(ctx, h)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return nil, nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "Invalid or expired exchanged credential; exchange a new token (POST /v1/oidc/token).")
		} else if err != nil {
			return nil, nil, err
		}
		if !now.Before(ec.ExpiresAt) {
			return nil, nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "This exchanged credential expired; exchange a new token (POST /v1/oidc/token).")
		}
		rb, err := s.Store.RobotByID(ctx, ec.RobotID)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return nil, nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "The robot account of this exchanged credential no longer exists.")
		} else if err != nil {
			return nil, nil, err
		}
		if err := app.CheckRobot(rb, now); err != nil {
			return nil, nil, err
		}
		until := rb.Until(ec.ExpiresAt)
		p := app.RobotPrincipal(rb, ec.ID)
		p.PublisherID = ec.PublisherID
		return p, &until, nil
	})
}

// cachedRobotPrincipal serves a robot credential (a secret or an
// exchanged credential) from the credential cache, or resolves it with
// load (given the value's hash) and caches it until the time load says
// (nil: the cache's own bound). Either way the robot's use is recorded.
func (s *Server) cachedRobotPrincipal(value string, now time.Time, load func(h []byte) (*chartctl.Principal, *time.Time, error)) (*chartctl.Principal, error) {
	h := token.Hash(value)
	p, _, ok := s.creds.get(h, now)
	if !ok {
		gen := s.creds.generation()
		var until *time.Time
		var err error
		if p, until, err = load(h); err != nil {
			return nil, err
		}
		s.creds.put(h, gen, p, p.CredentialID, until, now)
	}
	s.touch.recordRobot(p.Robot.ID, now)
	return p, nil
}

func (s *Server) principalFor(ctx context.Context, userID, credID string, scopes chartctl.Scopes) (*chartctl.Principal, error) {
	u, err := s.Store.User(ctx, userID)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "The account of this credential no longer exists.")
	} else if err != nil {
		return nil, err
	}
	if u.Disabled {
		return nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "The account of this credential is disabled.")
	}
	roles, err := s.Store.OrgRoles(ctx, u.ID, u.Email)
	if err != nil {
		return nil, err
	}
	grants, err := s.Store.GrantsFor(ctx, u.ID, u.Email)
	if err != nil {
		return nil, err
	}
	return &chartctl.Principal{User: u, CredentialID: credID, Scopes: scopes, OrgRoles: roles, Grants: grants}, nil
}

// PrincipalFor returns the principal of a user acting through credID with
// scopes. The dashboard uses it for signed-in sessions.
func (s *Server) PrincipalFor(ctx context.Context, userID, credID string, scopes chartctl.Scopes) (*chartctl.Principal, error) {
	return s.principalFor(ctx, userID, credID, scopes)
}

// InvalidateCredentials drops cached principals; call it after changing
// keys, users or memberships outside the server's own handlers.
func (s *Server) InvalidateCredentials() { s.creds.invalidate() }

// FlushUsage writes the API key and robot last-used times still batched
// in memory, so a page that shows them (the dashboard's robot page) is
// current.
func (s *Server) FlushUsage() { s.touch.flush() }

// PrincipalOf returns the authenticated caller of a /v1 request.
func PrincipalOf(c echo.Context) *chartctl.Principal { return httpx.PrincipalOf(c) }

// rateLimit counts the request against its buckets (§7) in one
// all-or-nothing step and sets the X-RateLimit-* headers of the tightest.
func (s *Server) rateLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		var extra []ratelimit.Request
		switch {
		case c.Path() == "/v1/repositories/:repo/charts" && c.Request().Method == http.MethodPost:
			// Charged by the handler once the caller may write there.
			return next(c)
		case c.Path() == "/v1/search":
			extra = append(extra, ratelimit.Request{Bucket: bucketSearch, Key: s.clientIP(c)})
		}
		if err := s.takeRate(c, httpx.PrincipalOf(c), extra...); err != nil {
			return err
		}
		return next(c)
	}
}

// TakeRate is takeRate for the protocol packages (httpx.Limiter).
func (s *Server) TakeRate(c echo.Context, p *chartctl.Principal, extra ...ratelimit.Request) error {
	return s.takeRate(c, p, extra...)
}

// takeRate charges p's global bucket and the extra buckets in one
// all-or-nothing step, sets the X-RateLimit-* headers of the tightest, and
// returns ERATELIMIT (with Retry-After set) when any bucket refuses.
func (s *Server) takeRate(c echo.Context, p *chartctl.Principal, extra ...ratelimit.Request) error {
	// A request charges one to three buckets: the array keeps them off
	// the heap.
	var buf [3]ratelimit.Request
	reqs := append(append(buf[:0], ratelimit.Request{Bucket: bucketGlobal, Key: p.RateKey()}), extra...)
	d := s.limits.Take(reqs...)
	if len(d.Results) > 0 {
		setRateHeaders(c, d.Tightest)
	}
	if !d.Allowed {
		s.refuseRate(c, d)
		return chartctl.Errorf(chartctl.ERATELIMIT, "Rate limit exceeded for %s; retry in %d seconds.", d.Tightest.Bucket, httpx.RetrySeconds(d.RetryAfter))
	}
	return nil
}

// refuseRate reports a refusal d (of this server's limiter or the
// application layer's charge of it): the refusing bucket's X-RateLimit-*
// headers, Retry-After and the metric.
func (s *Server) refuseRate(c echo.Context, d ratelimit.Decision) {
	setRateHeaders(c, d.Tightest)
	s.metrics.limited.WithLabelValues(d.Tightest.Bucket).Inc()
	httpx.SetRetryAfter(c, d.RetryAfter)
}

func setRateHeaders(c echo.Context, r ratelimit.Result) {
	// Keys in canonical form, assigned directly, the five values in one
	// allocation (each slice capped, so an Add copies): this runs on
	// every request.
	h := c.Response().Header()
	v := [5]string{strconv.Itoa(r.Limit), strconv.Itoa(r.Remaining), strconv.Itoa(r.Used), strconv.FormatInt(r.Reset.Unix(), 10), r.Bucket}
	vals := v[:]
	h["X-Ratelimit-Limit"] = vals[0:1:1]
	h["X-Ratelimit-Remaining"] = vals[1:2:2]
	h["X-Ratelimit-Used"] = vals[2:3:3]
	h["X-Ratelimit-Reset"] = vals[3:4:4]
	h["X-Ratelimit-Resource"] = vals[4:5:5]
}

// credentialCache remembers resolved API keys briefly so the hot path does
// no store reads. Any change to keys, users or memberships made through the
// server bumps the generation, which drops every entry.
type credentialCache struct {
	mu      sync.Mutex
	gen     uint64
	entries map[string]credEntry
}

type credEntry struct {
	p       *chartctl.Principal
	keyID   string
	expires time.Time
}

// credentialTTL bounds how stale a cached credential may be.
const credentialTTL = 30 * time.Second

func newCredentialCache() *credentialCache {
	return &credentialCache{entries: map[string]credEntry{}}
}

func (cc *credentialCache) get(h []byte, now time.Time) (*chartctl.Principal, string, bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	e, ok := cc.entries[string(h)]
	if !ok || !now.Before(e.expires) {
		return nil, "", false
	}
	return e.p, e.keyID, true
}

func (cc *credentialCache) generation() uint64 {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.gen
}

func (cc *credentialCache) put(h []byte, gen uint64, p *chartctl.Principal, keyID string, keyExpiry *time.Time, now time.Time) {
	exp := now.Add(credentialTTL)
	if keyExpiry != nil && keyExpiry.Before(exp) {
		exp = *keyExpiry
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if gen != cc.gen {
		return
	}
	if len(cc.entries) > 10000 {
		clear(cc.entries)
	}
	cc.entries[string(h)] = credEntry{p: p, keyID: keyID, expires: exp}
}

func (cc *credentialCache) invalidate() {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.gen++
	clear(cc.entries)
}

// touchBatcher coalesces API key and robot last-used times and writes
// them in one transaction each every few seconds, so authentication never
// writes.
type touchBatcher struct {
	store  chartctl.Store
	logger *slog.Logger
	// writing is held for a whole flush, so a flush that finds nothing
	// pending still returns only after an earlier flush's write is
	// committed (a page that flushes then reads sees every use before it).
	writing sync.Mutex
	mu      sync.Mutex
	used    map[string]time.Time
	robots  map[string]time.Time
}

func newTouchBatcher(store chartctl.Store, logger *slog.Logger) *touchBatcher {
	return &touchBatcher{store: store, logger: logger, used: map[string]time.Time{}, robots: map[string]time.Time{}}
}

func (t *touchBatcher) record(keyID string, at time.Time) {
	t.mu.Lock()
	t.used[keyID] = at
	t.mu.Unlock()
}

// recordRobot records the use of the robot with id (its secret or a
// credential exchanged for it).
func (t *touchBatcher) recordRobot(id string, at time.Time) {
	t.mu.Lock()
	t.robots[id] = at
	t.mu.Unlock()
}

func (t *touchBatcher) flush() {
	t.writing.Lock()
	defer t.writing.Unlock()
	t.mu.Lock()
	used, robots := t.used, t.robots
	t.used, t.robots = map[string]time.Time{}, map[string]time.Time{}
	t.mu.Unlock()
	if len(used) > 0 {
		if err := t.store.TouchAPIKeys(context.Background(), used); err != nil {
			t.logger.Error("record key use", "err", err)
		}
	}
	if len(robots) > 0 {
		if err := t.store.TouchRobots(context.Background(), robots); err != nil {
			t.logger.Error("record robot use", "err", err)
		}
	}
}

// run flushes every 2 seconds until stop closes, then once more.
func (t *touchBatcher) run(stop <-chan struct{}) {
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			t.flush()
		case <-stop:
			t.flush()
			return
		}
	}
}
