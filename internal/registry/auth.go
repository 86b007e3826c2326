package registry

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

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

type principalKey struct{}

// credential extracts the credential of the request: the token of Bearer,
// or the password of Basic (any user name). ok is false for a malformed or
// unsupported header.
func credential(req *http.Request) (cred string, present, ok bool) {
	h := req.Header.Get("Authorization")
	if h == "" {
		return "", false, true
	}
	scheme, rest, _ := strings.Cut(h, " ")
	rest = strings.TrimSpace(rest)
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		return rest, true, rest != ""
	case strings.EqualFold(scheme, "Basic"):
		raw, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			return "", true, false
		}
		_, pw, found := strings.Cut(string(raw), ":")
		return pw, true, found && pw != ""
	}
	return "", true, false
}

// principal resolves the request's credential: nil for none (or the
// anonymous token), an UNAUTHORIZED error for a bad one.
func (r *Registry) principal(req *http.Request) (*chartctl.Principal, error) {
	if p, ok := req.Context().Value(principalKey{}).(*chartctl.Principal); ok {
		return p, nil
	}
	cred, present, ok := credential(req)
	if !present || cred == anonymousToken {
		return nil, nil
	}
	if !ok {
		return nil, r.unauthorized(req, "Malformed Authorization header: use Bearer <token> or Basic with the API key as password.")
	}
	if r.Auth == nil {
		return nil, r.unauthorized(req, "This registry accepts no credentials.")
	}
	p, err := r.Auth.Principal(req, cred)
	if err != nil {
		if chartctl.ErrorCode(err) == chartctl.EUNAUTHORIZED {
			return nil, r.unauthorized(req, chartctl.ErrorMessage(err))
		}
		return nil, err
	}
	return p, nil
}

// withPrincipal caches the resolved principal in the request's context.
func withPrincipal(req *http.Request, p *chartctl.Principal) *http.Request {
	return req.WithContext(context.WithValue(req.Context(), principalKey{}, p))
}

func (r *Registry) unauthorized(req *http.Request, msg string) *Error {
	return newError(http.StatusUnauthorized, CodeUnauthorized, "%s", msg)
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
func (r *Registry) authorize(w http.ResponseWriter, req *http.Request, name string, act action) (*chartctl.Principal, *chartctl.Repository, error) {
	if !chartctl.ValidOCIName(name) {
		if repo, rest, ok := chartPath(name); ok && chartctl.ValidOCIName(repo) && rest != "" {
			// A chart whose name is not a valid OCI path component (upper
			// case, a trailing '-') stays classic-only.
			return nil, nil, errNameUnknown(name)
		}
		return nil, nil, newError(http.StatusBadRequest, CodeNameInvalid, "Invalid repository name %q: use lowercase path components of a-z, 0-9 and separators '.', '_', '-', joined by '/'.", name)
	}
	p, err := r.principal(req)
	if err != nil {
		return nil, nil, err
	}
	scope := "repository:" + name + ":pull"
	if act != actionPull {
		scope = "repository:" + name + ":pull,push"
		if act == actionDelete {
			scope = "repository:" + name + ":delete"
		}
	}
	needLogin := func(msg string) error {
		w.Header().Set("WWW-Authenticate", r.challenge(req, scope))
		return newError(http.StatusUnauthorized, CodeUnauthorized, "%s", msg)
	}
	repo, err := r.Store.Repository(req.Context(), repoOf(name))
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
	need := chartctl.ScopeRepoRead
	if act != actionPull {
		need = chartctl.ScopeRepoWrite
	}
	if !p.Scopes.Allows(need) {
		return nil, nil, errDenied("This credential lacks the %s scope.", need)
	}
	if act != actionPull && !p.RepoRole(repo).AtLeast(chartctl.RoleMaintainer) {
		if repo.Organization == "" {
			return nil, nil, errDenied("Only the owner of repository %q may %s here.", repo.Name, act)
		}
		return nil, nil, errDenied("Pushing or deleting in repository %q needs the maintainer role in organization %q.", repo.Name, repo.Organization)
	}
	return p, repo, nil
}

// canPull reports whether p may pull from name (for mounts and the
// catalog), without answering anything.
func (r *Registry) canPull(ctx context.Context, p *chartctl.Principal, name string) bool {
	repo, err := r.Store.Repository(ctx, repoOf(name))
	if err != nil || !p.CanSeeRepo(repo) {
		return false
	}
	return p == nil || p.Scopes.Allows(chartctl.ScopeRepoRead)
}

// charge counts a write against the rate limits: `global` for the
// credential, and `upload` for the repository when a chart version is
// pushed. Anonymous requests are never writes (they are refused before).
func (r *Registry) charge(w http.ResponseWriter, p *chartctl.Principal, uploadRepo string) error {
	if r.Limits == nil || p == nil {
		return nil
	}
	reqs := []ratelimit.Request{{Bucket: ratelimit.Global, Key: p.CredentialID}}
	if uploadRepo != "" {
		reqs = append(reqs, ratelimit.Request{Bucket: ratelimit.Upload, Key: uploadRepo})
	}
	d := r.Limits.Take(reqs...)
	if t := d.Tightest; t.Bucket != "" {
		h := w.Header()
		h.Set("X-RateLimit-Limit", fmt.Sprint(t.Limit))
		h.Set("X-RateLimit-Remaining", fmt.Sprint(t.Remaining))
		h.Set("X-RateLimit-Used", fmt.Sprint(t.Used))
		h.Set("X-RateLimit-Reset", fmt.Sprint(t.Reset.Unix()))
		h.Set("X-RateLimit-Resource", t.Bucket)
	}
	if d.Allowed {
		return nil
	}
	secs := int((d.RetryAfter + 999_999_999) / 1_000_000_000)
	if secs < 1 {
		secs = 1
	}
	e := newError(http.StatusTooManyRequests, CodeTooManyRequests, "Rate limit %q exceeded; retry in %d seconds.", d.Tightest.Bucket, secs)
	e.RetryAfter = secs
	return e
}
