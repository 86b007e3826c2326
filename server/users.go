package server

import (
	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/token"
)

// handleGetUser answers who the credential belongs to and its scopes;
// for a robot account (its secret or a credential exchanged for it) also
// the robot's ORG/NAME, permissions and repository patterns.
func (s *Server) handleGetUser(c echo.Context) error {
	p := httpx.PrincipalOf(c)
	u := client.User{ID: p.User.ID, Email: p.User.Email, Admin: p.User.Admin, Scopes: p.Scopes.Strings(), CreatedAt: ts(p.User.CreatedAt)}
	if p.Robot != nil {
		u.Admin, u.Robot, u.Permissions = false, p.Robot.FullName(), p.Robot.Permissions.Strings()
	}
	if p.Repositories != nil {
		u.Repositories = p.Repositories
	}
	return httpx.Data(c, u)
}

// handleListAPIKeys lists the caller's API keys (never their values).
// Robot accounts have none: they are refused rather than shown an empty
// list, as every other account endpoint refuses them.
func (s *Server) handleListAPIKeys(c echo.Context) error {
	if err := app.RequireHuman(httpx.PrincipalOf(c), "hold API keys"); err != nil {
		return err
	}
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	s.touch.flush()
	keys, err := s.Store.APIKeys(c.Request().Context(), httpx.PrincipalOf(c).User.ID)
	if err != nil {
		return err
	}
	return httpx.ListPage(c, keys, pg, toAPIKey)
}

// handleCreateAPIKey creates a key for the caller; its scopes never exceed
// the caller's.
func (s *Server) handleCreateAPIKey(c echo.Context) error {
	if err := httpx.RequireScope(c, chartctl.ScopeKeysWrite); err != nil {
		return err
	}
	var req client.CreateAPIKeyRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	p := httpx.PrincipalOf(c)
	return s.createAPIKey(c, p.User, p, req)
}

// handleCreateUserAPIKey lets an admin create a key for another user, such
// as a CI service account.
func (s *Server) handleCreateUserAPIKey(c echo.Context) error {
	if err := requireAdmin(c); err != nil {
		return err
	}
	var req client.CreateAPIKeyRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	u, err := s.Store.UserByEmail(c.Request().Context(), c.Param("email"))
	if err != nil {
		return err
	}
	return s.createAPIKey(c, u, httpx.PrincipalOf(c), req)
}

// createAPIKey creates a key for u; its scopes and repositories never go
// past those of the creating credential, p's.
func (s *Server) createAPIKey(c echo.Context, u *chartctl.User, p *chartctl.Principal, req client.CreateAPIKeyRequest) error {
	ceiling := p.Scopes
	name, err := app.ValidateName("key", req.Name)
	if err != nil {
		return err
	}
	if len(req.Scopes) == 0 {
		return chartctl.Invalid("scopes", "scopes is required: list at least one of %s.", chartctl.Scopes(chartctl.AllScopes).String())
	}
	scopes, err := chartctl.NewScopes("scopes", req.Scopes)
	if err != nil {
		return err
	}
	if !ceiling.Covers(scopes) {
		return chartctl.Errorf(chartctl.EFORBIDDEN, "A new key cannot have scopes your credential lacks (you have: %s).", ceiling.String())
	}
	if err := app.RepoPatternsWithin(p.Repositories, req.Repositories); err != nil {
		return err
	}
	now := s.Now()
	if req.ExpiresAt != nil && !req.ExpiresAt.After(now) {
		return chartctl.Invalid("expires_at", "expires_at must be in the future.")
	}
	ctx := c.Request().Context()
	value, hash := token.New(token.APIKeyPrefix)
	k := &chartctl.APIKey{UserID: u.ID, Name: name, Scopes: scopes, Hash: hash, CreatedAt: now, ExpiresAt: req.ExpiresAt,
		Repositories: req.Repositories}
	// The application layer checks the per-user cap and charges the keys
	// bucket, for this endpoint and the dashboard's form alike.
	if err := s.app.CreateAPIKey(ctx, u, k); err != nil {
		if rl := app.RateLimitedBy(err); rl != nil {
			s.refuseRate(c, rl.Decision)
		}
		return err
	}
	out := toAPIKey(k)
	out.Key = value
	return httpx.Data(c, out)
}

// handleDeleteAPIKey revokes one of the caller's keys; a credential may
// revoke only keys whose scopes it has itself.
func (s *Server) handleDeleteAPIKey(c echo.Context) error {
	if err := httpx.RequireScope(c, chartctl.ScopeKeysWrite); err != nil {
		return err
	}
	ctx := c.Request().Context()
	p := httpx.PrincipalOf(c)
	keys, err := s.Store.APIKeys(ctx, p.User.ID)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.ID == c.Param("id") && !p.Scopes.Covers(k.Scopes) {
			return chartctl.Errorf(chartctl.EFORBIDDEN, "This credential cannot revoke a key with scopes it lacks (the key has %s).", k.Scopes.String())
		}
	}
	if err := s.app.RevokeAPIKey(ctx, p.User, c.Param("id")); err != nil {
		return err
	}
	s.creds.invalidate()
	return httpx.Data(c, map[string]any{"id": c.Param("id"), "revoked": true})
}

// handleCreateUser lets an admin create an account.
func (s *Server) handleCreateUser(c echo.Context) error {
	if err := requireAdmin(c); err != nil {
		return err
	}
	var req client.CreateUserRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	email, err := app.ValidateEmail(req.Email)
	if err != nil {
		return err
	}
	u := &chartctl.User{Email: email, Admin: req.Admin, CreatedAt: s.Now()}
	if req.Password != "" {
		if err := app.ValidatePassword("password", req.Password); err != nil {
			return err
		}
		h, err := app.HashPassword(req.Password)
		if err != nil {
			return err
		}
		u.PasswordHash = h
	}
	if err := s.Store.CreateUser(s.app.Record(c.Request().Context(), "user.create", u.Email, ""), u); err != nil {
		return err
	}
	s.creds.invalidate()
	return httpx.Data(c, client.User{ID: u.ID, Email: u.Email, Admin: u.Admin, Scopes: []string{}, CreatedAt: ts(u.CreatedAt)})
}

// handleRateLimit reports the caller's buckets without counting (§7).
func (s *Server) handleRateLimit(c echo.Context) error {
	p := httpx.PrincipalOf(c)
	res := map[string]client.RateLimitResource{}
	add := func(bucket, key string) {
		if !s.limits.Limit(bucket).Disabled() {
			r := s.limits.Peek(bucket, key)
			res[bucket] = client.RateLimitResource{Limit: r.Limit, Remaining: r.Remaining, Reset: r.Reset.Unix(), Used: r.Used}
			if bucket == bucketGlobal {
				setRateHeaders(c, r)
			}
		}
	}
	add(bucketGlobal, p.RateKey())
	add(bucketSearch, s.clientIP(c))
	if repo := c.QueryParam("repository"); repo != "" {
		if _, err := s.app.VisibleRepo(c.Request().Context(), p, repo); err != nil {
			return err
		}
		add(bucketUpload, repo)
	}
	return httpx.Data(c, client.RateLimits{Resources: res})
}

// adminTarget loads the user named by the :email parameter for an admin
// endpoint, after checking the caller may use admin endpoints.
func (s *Server) adminTarget(c echo.Context) (*chartctl.User, error) {
	if err := requireAdmin(c); err != nil {
		return nil, err
	}
	u, err := s.Store.UserByEmail(c.Request().Context(), c.Param("email"))
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "User %q not found.", c.Param("email"))
	}
	return u, err
}

// handleListUsers lists every user for a server admin, with when each was
// last seen: the later of their last dashboard sign-in and their API keys'
// last use.
func (s *Server) handleListUsers(c echo.Context) error {
	if err := requireAdmin(c); err != nil {
		return err
	}
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	s.touch.flush()
	users, err := s.Store.Users(ctx)
	if err != nil {
		return err
	}
	items, meta := httpx.Paginate(users, pg)
	out := make([]client.Account, len(items))
	for i, u := range items {
		keys, err := s.Store.APIKeys(ctx, u.ID)
		if err != nil {
			return err
		}
		out[i] = toAccount(u, keys)
	}
	return httpx.List(c, out, meta)
}

func toAccount(u *chartctl.User, keys []*chartctl.APIKey) client.Account {
	seen := u.LastSeenAt
	for _, k := range keys {
		if k.LastUsedAt != nil && (seen == nil || k.LastUsedAt.After(*seen)) {
			seen = k.LastUsedAt
		}
	}
	return client.Account{ID: u.ID, Email: u.Email, Admin: u.Admin, Disabled: u.Disabled, CreatedAt: ts(u.CreatedAt), LastSeenAt: tsp(seen)}
}

// refuseSelf answers 403 when an admin would disable, demote or delete
// their own account: another admin must do it, so nobody locks
// themselves out by mistake.
func refuseSelf(c echo.Context, u *chartctl.User, what string) error {
	if httpx.PrincipalOf(c).User.ID == u.ID {
		return chartctl.Errorf(chartctl.EFORBIDDEN, "You cannot %s your own account; ask another server admin.", what)
	}
	return nil
}

// handleUpdateUser lets an admin disable or enable a user, make or unmake
// an admin, or set a password. Disabling ends the user's sessions, OAuth
// grants and API keys at once.
func (s *Server) handleUpdateUser(c echo.Context) error {
	u, err := s.adminTarget(c)
	if err != nil {
		return err
	}
	var req client.UpdateUserRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	if req.Disabled == nil && req.Admin == nil && req.Password == nil {
		return chartctl.Invalid("body", "Nothing to change: send disabled, admin or password.")
	}
	if req.Disabled != nil && *req.Disabled {
		if err := refuseSelf(c, u, "disable"); err != nil {
			return err
		}
	}
	if req.Admin != nil && !*req.Admin {
		if err := refuseSelf(c, u, "remove admin from"); err != nil {
			return err
		}
	}
	upd := chartctl.UserUpdate{Disabled: req.Disabled, Admin: req.Admin}
	if req.Password != nil {
		if err := app.ValidatePassword("password", *req.Password); err != nil {
			return err
		}
		h, err := app.HashPassword(*req.Password)
		if err != nil {
			return err
		}
		upd.PasswordHash = &h
	}
	ctx := c.Request().Context()
	updated, err := s.Store.UpdateUser(s.app.Record(ctx, "user.update", u.Email, ""), u.ID, upd)
	if err != nil {
		return err
	}
	s.creds.invalidate()
	keys, err := s.Store.APIKeys(ctx, u.ID)
	if err != nil {
		return err
	}
	return httpx.Data(c, toAccount(updated, keys))
}

// handleDeleteUser lets an admin delete a user: their memberships and
// credentials go; their personal repositories stay, readable by admins.
func (s *Server) handleDeleteUser(c echo.Context) error {
	u, err := s.adminTarget(c)
	if err != nil {
		return err
	}
	if err := refuseSelf(c, u, "delete"); err != nil {
		return err
	}
	if err := s.Store.DeleteUser(s.app.Record(c.Request().Context(), "user.delete", u.Email, ""), u.ID); err != nil {
		return err
	}
	s.creds.invalidate()
	return httpx.Data(c, map[string]any{"email": u.Email, "deleted": true})
}

// handleListUserAPIKeys lists another user's keys for an admin.
func (s *Server) handleListUserAPIKeys(c echo.Context) error {
	u, err := s.adminTarget(c)
	if err != nil {
		return err
	}
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	s.touch.flush()
	keys, err := s.Store.APIKeys(c.Request().Context(), u.ID)
	if err != nil {
		return err
	}
	return httpx.ListPage(c, keys, pg, toAPIKey)
}

// handleDeleteUserAPIKey lets an admin revoke another user's key.
func (s *Server) handleDeleteUserAPIKey(c echo.Context) error {
	u, err := s.adminTarget(c)
	if err != nil {
		return err
	}
	if err := s.app.RevokeAPIKey(c.Request().Context(), u, c.Param("id")); err != nil {
		return err
	}
	s.creds.invalidate()
	return httpx.Data(c, map[string]any{"id": c.Param("id"), "revoked": true})
}
