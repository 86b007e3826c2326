package registry

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/ratelimit"
)

// This file holds the registry's authorization (CONTRACT §11 and §6): pull
// needs repo:read on a repository the caller can see; push and delete need
// repo:write and the maintainer role. A repository an authenticated caller
// cannot see is NAME_UNKNOWN (404), as one that does not exist; an
// anonymous caller gets the 401 challenge for both, so clients log in and
// nothing reveals a private repository.

// anonymousToken is the token /v2/token issues to a caller without
// credentials: it stands for no credential at all.
const anonymousToken = "anonymous"

// action is what a request does to a name.
type action int

const (
	actionPull action = iota
	actionPush
	actionDelete
)

func (a action) String() string {
	switch a {
	case actionPush:
		return "push"
	case actionDelete:
		return "delete"
	}
	return "pull"
}

// principalKey caches the caller of a request in its echo.Context.
const principalKey = "registry.principal"

// hasCredential reports whether the request carries an Authorization
// header other than the anonymous token.
func hasCredential(req *http.Request) bool {
	h := req.Header.Get("Authorization")
	if h == "" {
		return false
	}
	scheme, rest, _ := strings.Cut(h, " ")
	return !(strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(rest) == anonymousToken)
}

// principal resolves the request's credential through the server: nil for
// none (or the anonymous token), UNAUTHORIZED with the token challenge for
// a bad one, TOOMANYREQUESTS for a client throttled after failures.
func (r *Registry) principal(c echo.Context) (*chartctl.Principal, error) {
	if p, ok := c.Get(principalKey).(*chartctl.Principal); ok {
		return p, nil
	}
	req := c.Request()
	if !hasCredential(req) {
		return nil, nil
	}
	if r.Auth == nil {
		c.Response().Header().Set("WWW-Authenticate", r.challenge(req, ""))
		return nil, newError(http.StatusUnauthorized, CodeUnauthorized, "This registry accepts no credentials.")
	}
	p, err := r.Auth.OptionalPrincipal(c, r.challenge(req, ""))
	if err != nil {
		return nil, err
	}
	c.Set(principalKey, p)
	return p, nil
}

// challenge returns the WWW-Authenticate value of a 401: the Docker token
// flow's Bearer challenge, with the scope when one is known.
func (r *Registry) challenge(req *http.Request, scope string) string {
	c := fmt.Sprintf(`Bearer realm="%s/v2/token",service="%s"`, r.baseURL(req), r.service(req))
	if scope != "" {
		c += fmt.Sprintf(`,scope="%s"`, scope)
	}
	return c
}

// repoOf returns the chartctl repository part of an OCI name.
func repoOf(name string) string {
	repo, _, _ := strings.Cut(name, "/")
	return repo
}

// authorize checks that the request may do act on name, returning the
// caller (nil for anonymous) and the name's chartctl repository.
func (r *Registry) authorize(c echo.Context, name string, act action) (*chartctl.Principal, *chartctl.Repository, error) {
	w, req := c.Response(), c.Request()
	if !chartctl.ValidOCIName(name) {
		if repo, rest, ok := chartPath(name); ok && chartctl.ValidOCIName(repo) && rest != "" {
			// A chart whose name is not a valid OCI path component (upper
			// case, a trailing '-') stays classic-only.
			return nil, nil, errNameUnknown(name)
		}
		return nil, nil, newError(http.StatusBadRequest, CodeNameInvalid, "Invalid repository name %q: use lowercase path components of a-z, 0-9 and separators '.', '_', '-', joined by '/'.", name)
	}
	p, err := r.principal(c)
	if err != nil {
		return nil, nil, err
	}
	needLogin := func(msg string) error {
		scope := "repository:" + name + ":pull"
		if act != actionPull {
			scope = "repository:" + name + ":pull,push"
			if act == actionDelete {
				scope = "repository:" + name + ":delete"
			}
		}
		w.Header().Set("WWW-Authenticate", r.challenge(req, scope))
		return denied(c, newError(http.StatusUnauthorized, CodeUnauthorized, "%s", msg))
	}
	repo, err := r.App.Repository(req.Context(), repoOf(name))
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND || (err == nil && !p.CanSeeRepo(repo)) {
		if p == nil {
			return nil, nil, needLogin("Authentication required.")
		}
		return nil, nil, errNameUnknown(name)
	} else if err != nil {
		return nil, nil, err
	}
	if p == nil {
		if act == actionPull {
			return nil, repo, nil
		}
		return nil, nil, needLogin(fmt.Sprintf("Authentication required to %s.", act))
	}
	if act == actionPull {
		if !p.Scopes.Allows(chartctl.ScopeRepoRead) {
			return nil, nil, denied(c, errDenied("This credential lacks the %s scope.", chartctl.ScopeRepoRead))
		}
		return p, repo, nil
	}
	// Push and delete: the application layer's decision, the same as on
	// /v1 and the ChartMuseum API (scope, role, a robot's permission).
	perm := chartctl.RobotPush
	if act == actionDelete {
		perm = chartctl.RobotDelete
	}
	if err := app.ChartWriteDecision(p, repo, perm); err != nil {
		return nil, nil, denied(c, errDenied("%s", chartctl.ErrorMessage(err)))
	}
	if repo.ReadOnly() {
		return nil, nil, errDenied("%s", app.ReadOnlyMessage(repo))
	}
	return p, repo, nil
}

// canPull reports whether p may pull from name (for mounts and the
// catalog), without answering anything.
func (r *Registry) canPull(ctx context.Context, p *chartctl.Principal, name string) bool {
	repo, err := r.App.Repository(ctx, repoOf(name))
	if err != nil || !p.CanSeeRepo(repo) {
		return false
	}
	return p == nil || p.Scopes.Allows(chartctl.ScopeRepoRead)
}

// charge counts a write against the rate limits: `global` for the
// credential, and the upload bucket for the repository when a chart
// version is pushed. Anonymous requests are never writes (they are refused
// before).
func (r *Registry) charge(c echo.Context, p *chartctl.Principal, uploadRepo string) error {
	if r.Limits == nil || p == nil {
		return nil
	}
	var extra []ratelimit.Request
	if uploadRepo != "" {
		extra = append(extra, ratelimit.Request{Bucket: r.UploadBucket, Key: uploadRepo})
	}
	return r.Limits.TakeRate(c, p, extra...)
}
