package web

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/token"
)

// SignInPage is the content of the sign-in page.
type SignInPage struct {
	Email    string
	ReturnTo string
	Error    string
	// ForApp names the OAuth application the user is signing in for.
	ForApp bool
	// SSOName labels the identity provider's button ("" for none).
	SSOName string
	// Form shows the password form; Action is where it posts.
	Form   bool
	Action string
	// BreakGlass marks /signin/local with local sign-in off: the form
	// is for local admins only.
	BreakGlass bool
	// LDAP makes the form take a directory login (user name or email).
	LDAP bool
}

// ldapForm reports whether the form c posts to (or shows) checks
// directory logins: /signin with LDAP configured. The break-glass form
// at /signin/local stays for local accounts only.
func (d *Dashboard) ldapForm(c echo.Context) bool {
	return d.opts.LDAP.Provider != nil && c.Path() != "/signin/local"
}

// genericSignInError never says whether the email exists.
const genericSignInError = "Incorrect email or password."

// signInError is the answer to a wrong login or password: one for every
// kind of account the form takes, so it does not tell local accounts from
// directory ones.
func (d *Dashboard) signInError(c echo.Context) string {
	if d.ldapForm(c) {
		return "Incorrect user name or password."
	}
	return genericSignInError
}

func (d *Dashboard) handleSignInPage(c echo.Context) error {
	returnTo := safeReturnTo(c.QueryParam("return_to"))
	if u, _ := d.Session(c); u != nil {
		return c.Redirect(http.StatusSeeOther, returnTo)
	}
	return d.renderSignIn(c, http.StatusOK, SignInPage{ReturnTo: returnTo})
}

// handleLocalSignInPage is the break-glass sign-in: the password form,
// kept for local admins when --local-signin=false hides it on /signin.
func (d *Dashboard) handleLocalSignInPage(c echo.Context) error {
	returnTo := safeReturnTo(c.QueryParam("return_to"))
	if u, _ := d.Session(c); u != nil {
		return c.Redirect(http.StatusSeeOther, returnTo)
	}
	return d.renderSignIn(c, http.StatusOK, SignInPage{ReturnTo: returnTo, Action: "/signin/local"})
}

func (d *Dashboard) renderSignIn(c echo.Context, status int, sp SignInPage) error {
	sp.ForApp = strings.HasPrefix(sp.ReturnTo, "/oauth/")
	if d.opts.SSO.Provider != nil {
		sp.SSOName = d.opts.SSO.Name
	}
	local := sp.Action == "/signin/local" || c.Path() == "/signin/local"
	if local {
		sp.Action = "/signin/local"
	} else {
		sp.Action = "/signin"
	}
	sp.LDAP = d.ldapForm(c)
	sp.Form = !d.opts.NoLocalSignIn || local || sp.LDAP
	sp.BreakGlass = d.opts.NoLocalSignIn && local
	return d.render(c, status, "signin", Page{Title: "Sign in", CSRF: d.CSRFToken(c), Data: sp})
}

func (d *Dashboard) handleSignIn(c echo.Context) error {
	returnTo := safeReturnTo(c.FormValue("return_to"))
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	// With LDAP the form's field is a login (a directory user name or an
	// email, decision 6), posted as "login"; "email" is the same field
	// for the local form and for clients that post it.
	login := strings.TrimSpace(c.FormValue("login"))
	if login == "" {
		login = strings.TrimSpace(c.FormValue("email"))
	}
	email := strings.ToLower(login)
	password := c.FormValue("password")
	sp := SignInPage{Email: login, ReturnTo: returnTo}
	ip := d.opts.ClientIP(c.Request())
	// An account many addresses are failing on is under a distributed
	// guess. Refusing it would lock its owner out from everywhere (the
	// finding N10), so it is only slowed: every attempt on it waits a
	// short, fixed delay first, before any lock is taken, so the waits of
	// different addresses do not queue behind each other.
	if attacked, _ := d.byAccount.Blocked(email); attacked && email != "" && !d.pause(c) {
		// The client went away while waiting: no one to answer, and
		// nothing to log as an error.
		return nil
	}
	// Checking the throttles, comparing the password and counting a
	// failure happen under the address's lock, so parallel attempts from
	// one address cannot all pass the check before the first failure
	// counts. Both throttles that refuse are keyed by the address: one
	// over every account (a guesser spraying many accounts) and one per
	// (account, address) (a guesser on one account), so failures from
	// elsewhere never refuse this address.
	defer d.attempts.lock("ip:" + ip)()
	if d.addressBlocked(ip, email) {
		sp.Error = "Too many failed sign-in attempts. Wait a few minutes and try again."
		return d.renderSignIn(c, http.StatusTooManyRequests, sp)
	}
	if email == "" || password == "" {
		sp.Error = "Enter your email and password."
		if d.ldapForm(c) {
			sp.Error = "Enter your user name (or email) and password."
		}
		return d.renderSignIn(c, http.StatusBadRequest, sp)
	}
	u, err := d.opts.Store.UserByEmail(c.Request().Context(), email)
	if err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		return err
	}
	// A login that is not a local account with a password is the
	// directory's to check; a directory account never falls back to a
	// password kept here (it has none).
	if d.ldapForm(c) && (u == nil || u.PasswordHash == "" || !u.Identity.Local()) {
		return d.ldapSignIn(c, sp, ip, email, login, password, u)
	}
	ok := false
	// With local sign-in off, passwords sign in local admins only (the
	// break-glass path); anyone else gets the same answer as a wrong
	// password, so the form does not tell which accounts are admins.
	if u != nil && u.PasswordHash != "" && !u.Disabled && (!d.opts.NoLocalSignIn || u.Admin) {
		ok = d.checkPass(u.PasswordHash, password)
	} else {
		// Spend the time a real check takes, so response times do not tell
		// which emails have accounts.
		d.checkPass(d.dummy(), password)
	}
	if !ok {
		d.countFailure(ip, email)
		d.auditSignIn(c, email, nil, chartctl.OutcomeFailed)
		sp.Error = d.signInError(c)
		return d.renderSignIn(c, http.StatusUnauthorized, sp)
	}
	if err := d.startSession(c, u); err != nil {
		return err
	}
	d.auditSignIn(c, email, u, chartctl.OutcomeSuccess)
	if err := d.opts.Store.TouchUser(c.Request().Context(), u.ID, d.opts.Now()); err != nil {
		d.opts.Logger.Warn("record sign-in time", "err", err)
	}
	return c.Redirect(http.StatusSeeOther, returnTo)
}

// addressBlocked reports whether ip is refused attempts on the account
// email: by its own throttle over every account, or by the one of the
// (account, address) pair. The caller holds ip's lock (attempts).
func (d *Dashboard) addressBlocked(ip, email string) bool {
	if blocked, _ := d.byIP.Blocked(ip); blocked {
		return true
	}
	blocked, _ := d.byAccountIP.Blocked(accountAddress(ip, email))
	return blocked
}

// countFailure counts a failed attempt on email from ip in the three
// throttles: the address's, the pair's and the account's (which only
// slows, see handleSignIn).
func (d *Dashboard) countFailure(ip, email string) {
	d.byIP.Fail(ip)
	d.byAccountIP.Fail(accountAddress(ip, email))
	d.byAccount.Fail(email)
}

// accountAddress is the (account, address) throttle's key. The address
// comes first: it never holds a space, so no pair can spell another. (No
// NUL: PostgreSQL text cannot hold one, and the shared backend dropped
// every count of this throttle.)
func accountAddress(ip, email string) string { return ip + " " + email }

// pause waits SignInDelay and reports true, or reports false as soon as
// the request is cancelled.
func (d *Dashboard) pause(c echo.Context) bool {
	t := time.NewTimer(d.opts.SignInDelay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.Request().Context().Done():
		return false
	}
}

// dummy is a password hash of nothing anyone can type, computed once.
func (d *Dashboard) dummy() string {
	d.dummyOnce.Do(func() {
		h, err := d.hashSecret(randomHex(16))
		if err == nil {
			d.dummyHash = h
		}
	})
	return d.dummyHash
}

// startSession replaces any session of this browser with a new one for u,
// with a fresh CSRF token (no session fixation).
func (d *Dashboard) startSession(c echo.Context, u *chartctl.User) error {
	ctx := c.Request().Context()
	if ck, err := c.Cookie(SessionCookie); err == nil {
		_ = d.opts.Sessions.DeleteWebSession(ctx, token.Hash(ck.Value))
	}
	value, hash := token.New(sessionPrefix)
	now := d.opts.Now()
	s := &chartctl.WebSession{Hash: hash, UserID: u.ID, CSRFToken: randomHex(32), CreatedAt: now.UTC(), ExpiresAt: now.Add(d.opts.SessionTTL).UTC()}
	if err := d.opts.Sessions.CreateWebSession(ctx, s); err != nil {
		return err
	}
	// Expired sessions, codes and tokens are swept on sign-in, at most
	// hourly, so the store stays bounded without a background goroutine.
	if d.sweepDue(now) {
		if _, err := d.opts.Sessions.DeleteExpiredOAuth(ctx, now); err != nil {
			d.opts.Logger.Warn("delete expired sessions", "err", err)
		}
	}
	d.setCookie(c, SessionCookie, value, int(d.opts.SessionTTL.Seconds()))
	d.setCookie(c, CSRFCookie, "", -1)
	c.Set("web.session", s)
	c.Set("web.user", u)
	return nil
}

func (d *Dashboard) handleSignOut(c echo.Context) error {
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	if ck, err := c.Cookie(SessionCookie); err == nil {
		if err := d.opts.Sessions.DeleteWebSession(c.Request().Context(), token.Hash(ck.Value)); err != nil {
			return err
		}
	}
	d.setCookie(c, SessionCookie, "", -1)
	// return_to (a local path) is where to come back after signing in
	// again: "use another account" on the consent page.
	return c.Redirect(http.StatusSeeOther, SignInURL(safeReturnTo(c.FormValue("return_to"))))
}

// sweepDue reports whether an hour has passed since the last sweep of
// expired records, and if so starts a new period.
func (d *Dashboard) sweepDue(now time.Time) bool {
	d.sweepMu.Lock()
	defer d.sweepMu.Unlock()
	if !d.lastSweep.IsZero() && now.Sub(d.lastSweep) < time.Hour {
		return false
	}
	d.lastSweep = now
	return true
}

// keyedLocks serializes sign-in attempts that share a throttle key (an
// address). The throttle's check and its count of a failure
// are separate steps with a slow password comparison between them; without
// this, a burst of parallel guesses would all pass the check before the
// first failure counted. Entries exist only while someone holds or waits
// for them.
type keyedLocks struct {
	mu    sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	mu   sync.Mutex
	refs int
}

// lock takes key's lock and returns the function that releases it.
func (k *keyedLocks) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyedLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyedLock{}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		k.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}

// auditSignIn records a sign-in attempt (session.signin) for email: the
// user when it succeeded, the address and request id always.
func (d *Dashboard) auditSignIn(c echo.Context, email string, u *chartctl.User, outcome chartctl.Outcome) {
	if d.opts.App == nil {
		return
	}
	ctx := c.Request().Context()
	if u != nil {
		act := chartctl.ActorFrom(ctx)
		act.UserID, act.Email, act.CredentialKind = u.ID, u.Email, chartctl.CredentialSession
		ctx = chartctl.WithActor(ctx, &act)
	}
	d.opts.App.AuditAct(ctx, "session.signin", email, "", outcome)
}
