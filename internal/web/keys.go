package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/token"
)

// KeyRow is one API key in the list.
type KeyRow struct {
	ID         string
	Name       string
	Scopes     []string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	ExpiresAt  *time.Time
	Expired    bool
	// Repositories are the key's repository patterns (none: every
	// repository its owner reaches).
	Repositories []string
}

// KeysPage is the content of the API Keys tab.
type KeysPage struct {
	Keys []KeyRow
}

// NewKeyPage is the content of the Generate New Key form.
type NewKeyPage struct {
	Name          string
	Scopes        []ScopeItem
	Expiry        string
	ExpiryOptions []ExpiryOption
	// Repositories is the form's comma-separated repository patterns.
	Repositories string
	Error        string
}

// ExpiryOption is a choice of key lifetime.
type ExpiryOption struct {
	Value, Label string
	Selected     bool
}

// CreatedKeyPage shows a new key's value, once.
type CreatedKeyPage struct {
	Key   KeyRow
	Value string
	// BaseURL is the server's URL, for the usage example.
	BaseURL string
}

// RevokeKeyPage asks for confirmation before revoking a key.
type RevokeKeyPage struct {
	Key KeyRow
}

var expiryChoices = []ExpiryOption{
	{Value: "30", Label: "30 days"},
	{Value: "60", Label: "60 days"},
	{Value: "90", Label: "90 days"},
	{Value: "365", Label: "1 year"},
	{Value: "never", Label: "No expiration"},
}

func keyRow(k *chartctl.APIKey, now time.Time) KeyRow {
	return KeyRow{ID: k.ID, Name: k.Name, Scopes: k.Scopes.Strings(), CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, ExpiresAt: k.ExpiresAt, Expired: k.Expired(now),
		Repositories: k.Repositories}
}

func (d *Dashboard) page(c echo.Context, title, nav, tab string, data any) Page {
	u, s := d.Session(c)
	return Page{Title: title, User: u, CSRF: s.CSRFToken, Nav: nav, Tab: tab, Data: data}
}

func (d *Dashboard) handleProfile(c echo.Context) error {
	return d.render(c, http.StatusOK, "profile", d.page(c, "Account settings", "settings", "profile", nil))
}

func (d *Dashboard) handleAPIKeys(c echo.Context) error {
	u, _ := d.Session(c)
	keys, err := d.opts.Store.APIKeys(c.Request().Context(), u.ID)
	if err != nil {
		return err
	}
	now := d.opts.Now()
	kp := KeysPage{Keys: make([]KeyRow, 0, len(keys))}
	// Newest first: the key just made is the one looked for.
	for i := len(keys) - 1; i >= 0; i-- {
		kp.Keys = append(kp.Keys, keyRow(keys[i], now))
	}
	p := d.page(c, "API keys", "settings", "keys", kp)
	if c.QueryParam("revoked") == "1" {
		p.Flash = "The API key was revoked. Requests using it are now refused."
	}
	return d.render(c, http.StatusOK, "apikeys", p)
}

// keyScopes are the scopes u may give a key from the dashboard: admin
// only for server admins.
func keyScopes(u *chartctl.User) []chartctl.Scope {
	out := make([]chartctl.Scope, 0, len(chartctl.AllScopes))
	for _, s := range chartctl.AllScopes {
		if s != chartctl.ScopeAdmin || (u != nil && u.Admin) {
			out = append(out, s)
		}
	}
	return out
}

func newKeyForm(u *chartctl.User, name string, checked map[string]bool, expiry string) NewKeyPage {
	np := NewKeyPage{Name: name, Expiry: expiry}
	for _, s := range keyScopes(u) {
		np.Scopes = append(np.Scopes, ScopeItem{Name: string(s), Description: s.Description(), Checked: checked[string(s)]})
	}
	for _, o := range expiryChoices {
		o.Selected = o.Value == expiry
		np.ExpiryOptions = append(np.ExpiryOptions, o)
	}
	return np
}

func (d *Dashboard) handleNewAPIKey(c echo.Context) error {
	u, _ := d.Session(c)
	np := newKeyForm(u, "", map[string]bool{string(chartctl.ScopeRepoRead): true}, "90")
	return d.render(c, http.StatusOK, "apikey_new", d.page(c, "Generate new API key", "settings", "keys", np))
}

func (d *Dashboard) handleCreateAPIKey(c echo.Context) error {
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	u, _ := d.Session(c)
	form, err := c.FormParams()
	if err != nil {
		return d.RenderError(c, http.StatusBadRequest, "Bad request", "The form could not be read.")
	}
	name := strings.TrimSpace(form.Get("name"))
	expiry := form.Get("expiry")
	checked := map[string]bool{}
	for _, s := range form["scopes"] {
		checked[s] = true
	}
	np := newKeyForm(u, name, checked, expiry)
	np.Repositories = strings.TrimSpace(form.Get("repositories"))
	fail := func(msg string) error {
		np.Error = msg
		return d.render(c, http.StatusBadRequest, "apikey_new", d.page(c, "Generate new API key", "settings", "keys", np))
	}
	// The API's rule (app.ValidateName), in the form's own words.
	if _, err := app.ValidateName("key", name); err != nil {
		if name == "" {
			return fail("Give the key a name of 1 to 100 characters, such as “CI deploys”.")
		}
		return fail(fmt.Sprintf("That name is too long (%d characters): give the key a name of at most %d characters.", utf8.RuneCountInString(name), app.MaxNameLength))
	}
	if len(form["scopes"]) == 0 {
		return fail("Choose at least one permission.")
	}
	scopes, err := chartctl.NewScopes("scopes", form["scopes"])
	if err != nil {
		return fail(chartctl.ErrorMessage(err))
	}
	if scopes.Allows(chartctl.ScopeAdmin) && !u.Admin {
		return fail("Only server admins can give a key the admin permission.")
	}
	now := d.opts.Now().UTC()
	var expires *time.Time
	if expiry != "never" {
		days, err := strconv.Atoi(expiry)
		if err != nil || days < 1 || days > 366 {
			return fail("Choose when the key expires.")
		}
		t := now.Add(time.Duration(days) * 24 * time.Hour).Truncate(time.Second)
		expires = &t
	}
	value, hash := token.New(token.APIKeyPrefix)
	k := &chartctl.APIKey{UserID: u.ID, Name: name, Scopes: scopes, Hash: hash, CreatedAt: now, ExpiresAt: expires,
		Repositories: splitPatterns(np.Repositories)}
	// The application layer makes every key, whatever the transport: its
	// per-user cap, "keys" rate limit and pattern rules hold here as on
	// /v1.
	err = d.opts.App.CreateAPIKey(c.Request().Context(), u, k)
	switch chartctl.ErrorCode(err) {
	case "":
	case chartctl.EINVALID:
		return fail(chartctl.ErrorMessage(err))
	case chartctl.EFORBIDDEN:
		np.Error = chartctl.ErrorMessage(err)
		return d.render(c, http.StatusForbidden, "apikey_new", d.page(c, "Generate new API key", "settings", "keys", np))
	case chartctl.ERATELIMIT:
		if rl := app.RateLimitedBy(err); rl != nil {
			httpx.SetRetryAfter(c, rl.Decision.RetryAfter)
		}
		np.Error = chartctl.ErrorMessage(err)
		return d.render(c, http.StatusTooManyRequests, "apikey_new", d.page(c, "Generate new API key", "settings", "keys", np))
	default:
		return err
	}
	// The value is in this response only; the page is never cached.
	return d.render(c, http.StatusOK, "apikey_created", d.page(c, "API key created", "settings", "keys", CreatedKeyPage{Key: keyRow(k, now), Value: value, BaseURL: d.BaseURL(c)}))
}

// userKey finds one of the signed-in user's keys.
func (d *Dashboard) userKey(c echo.Context) (*chartctl.APIKey, error) {
	u, _ := d.Session(c)
	keys, err := d.opts.Store.APIKeys(c.Request().Context(), u.ID)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if k.ID == c.Param("id") {
			return k, nil
		}
	}
	return nil, nil
}

func (d *Dashboard) handleRevokeAPIKeyPage(c echo.Context) error {
	k, err := d.userKey(c)
	if err != nil {
		return err
	}
	if k == nil {
		return d.RenderError(c, http.StatusNotFound, "Key not found", "This API key does not exist or was already revoked.")
	}
	return d.render(c, http.StatusOK, "apikey_revoke", d.page(c, "Revoke API key", "settings", "keys", RevokeKeyPage{Key: keyRow(k, d.opts.Now())}))
}

func (d *Dashboard) handleRevokeAPIKey(c echo.Context) error {
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	u, _ := d.Session(c)
	err := d.opts.App.RevokeAPIKey(c.Request().Context(), u, c.Param("id"))
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return d.RenderError(c, http.StatusNotFound, "Key not found", "This API key does not exist or was already revoked.")
	} else if err != nil {
		return err
	}
	d.opts.Principals.InvalidateCredentials()
	return c.Redirect(http.StatusSeeOther, "/settings/api-keys?revoked=1")
}

// splitPatterns reads the form's comma-separated repository patterns;
// none (nil) leaves the key unrestricted.
func splitPatterns(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
