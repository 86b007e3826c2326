package app

import (
	"context"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Directory answers whether an account of an identity provider that
// chartctl can ask (LDAP) still exists; *ldap.Provider implements it.
type Directory interface {
	// Exists reports whether the account subject is still there and
	// may still sign in. An error means the directory could not say.
	Exists(ctx context.Context, subject string) (bool, error)
}

// DirectoryCheckInterval is how often the users of a directory who hold
// API keys are looked up (CONTRACT §18: "at least hourly").
const DirectoryCheckInterval = time.Hour

// DisableGoneUser disables u because their identity provider no longer
// finds them (CONTRACT §18 "Sign-in"): the store ends their API keys,
// sessions and OAuth grants in the same transaction. It is audited as a
// user.update by the system, with why in the log.
func (a *App) DisableGoneUser(ctx context.Context, u *chartctl.User) error {
	if u.Disabled {
		return nil
	}
	yes := true
	if _, err := a.Store.UpdateUser(a.Record(ctx, "user.update", u.Email, ""), u.ID, chartctl.UserUpdate{Disabled: &yes}); err != nil {
		return err
	}
	a.Logger.Warn("user disabled: the identity provider no longer has the account", "user", u.Email, "provider", u.Identity.Provider, "subject", u.Identity.Subject)
	return nil
}

// CheckDirectoryUsers looks up, in dir, every enabled user bound to
// provider who holds an unexpired API key, and disables those dir no
// longer finds (their keys end with them). Users without keys are left
// to their next sign-in, which checks them anyway. Replicas sharing the
// store run it once per interval between them: it runs only under the
// lease "directory-check/PROVIDER", taken for interval and not released,
// and reports ran=false when another replica holds it. A directory error
// stops the run without disabling anyone: an outage is not an
// offboarding.
func (a *App) CheckDirectoryUsers(ctx context.Context, provider string, dir Directory, interval time.Duration) (disabled []*chartctl.User, ran bool, err error) {
	holder := a.Replica
	if holder == "" {
		holder = "local"
	}
	ok, err := a.Store.AcquireLease(ctx, "directory-check/"+provider, holder, interval)
	if err != nil || !ok {
		return nil, false, err
	}
	users, err := a.Store.Users(ctx)
	if err != nil {
		return nil, true, err
	}
	now := a.Now()
	for _, u := range users {
		if u.Disabled || u.Identity.Provider != provider {
			continue
		}
		keys, err := a.Store.APIKeys(ctx, u.ID)
		if err != nil {
			return disabled, true, err
		}
		active := false
		for _, k := range keys {
			active = active || !k.Expired(now)
		}
		if !active {
			continue
		}
		found, err := dir.Exists(ctx, u.Identity.Subject)
		if err != nil {
			return disabled, true, err
		}
		if found {
			continue
		}
		if err := a.DisableGoneUser(ctx, u); err != nil {
			if chartctl.ErrorCode(err) == chartctl.ECONFLICT {
				// The last enabled admin is never disabled by a
				// directory: the log says so, the run goes on.
				a.Logger.Error("directory check: the directory no longer has the last admin; left enabled", "user", u.Email)
				continue
			}
			return disabled, true, err
		}
		disabled = append(disabled, u)
	}
	return disabled, true, nil
}

// WatchDirectory runs CheckDirectoryUsers every interval until ctx ends,
// calling changed after a run that disabled someone (the server drops
// its cached credentials there).
func (a *App) WatchDirectory(ctx context.Context, provider string, dir Directory, interval time.Duration, changed func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		disabled, ran, err := a.CheckDirectoryUsers(ctx, provider, dir, interval)
		if len(disabled) > 0 && changed != nil {
			changed()
		}
		switch {
		case err != nil && ctx.Err() == nil:
			a.Logger.Error("directory check of users with API keys", "provider", provider, "err", err)
		case ran:
			a.Logger.Info("directory check of users with API keys", "provider", provider, "disabled", len(disabled))
		}
	}
}
