package app

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/url"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file records what changes: an audit entry for every act and an
// event for those webhooks may receive, both handed to the store with the
// change itself (chartctl.Change) so they commit in its transaction.

var (
	idMu      sync.Mutex
	idEntropy = ulid.Monotonic(rand.Reader, 0)
)

// NewID returns prefix followed by a new ULID, the form the stores use
// ("repo_01H…"). The application layer names records itself when an
// event must carry their ID.
func NewID(prefix string) string {
	idMu.Lock()
	defer idMu.Unlock()
	return prefix + ulid.MustNew(ulid.Now(), idEntropy).String()
}

// Record returns ctx carrying a chartctl.Change for the next mutating
// store call: an audit entry (action, target, organization, outcome
// success, the actor of ctx) and the given events. Transports that still
// call the store directly for a resource (users, API keys) use it so their
// writes are audited in the same transaction as the application layer's.
func (a *App) Record(ctx context.Context, action, target, org string, events ...*chartctl.Event) context.Context {
	var audit []*chartctl.AuditEntry
	if !a.noAudit {
		audit = []*chartctl.AuditEntry{{Time: a.Now().UTC(), Actor: chartctl.ActorFrom(ctx), Action: action, Target: target,
			Outcome: chartctl.OutcomeSuccess, Organization: org}}
	}
	if c := chartctl.ChangeFrom(ctx); c != nil {
		c.Audit = append(c.Audit, audit...)
		c.Events = append(c.Events, events...)
		return ctx
	}
	return chartctl.WithChange(ctx, &chartctl.Change{Audit: audit, Events: events})
}

// DisableAuditForBenchmark stops this App from writing audit entries, so
// a benchmark can measure what the audit log costs the write path (issue
// #18: uploads with the audit log and two webhooks on within 10 % of
// uploads with both off). The audit log is mandatory for users: no flag,
// configuration field or environment variable reaches this, and only
// benchmarks call it. Call it before the App serves requests.
func (a *App) DisableAuditForBenchmark() { a.noAudit = true }

// Committed tells the webhook dispatcher, if any, that events were
// committed. Call it after a store call that carried a Change.
func (a *App) Committed() {
	if a.OnEvents != nil {
		a.OnEvents()
	}
}

// AuditFailure records an act that changed nothing: refused (outcome
// denied) or failed. Errors are logged, not returned: the request's own
// answer matters more.
func (a *App) AuditFailure(ctx context.Context, action, target, org string, outcome chartctl.Outcome) {
	a.appendAudit(ctx, action, target, org, outcome)
}

// AuditSuccess records a successful act that writes no record of its own
// through the store (a verification run, a registry garbage collection),
// so it is in the audit log like every other successful write. Errors are
// logged, not returned.
func (a *App) AuditSuccess(ctx context.Context, action, target, org string) {
	a.appendAudit(ctx, action, target, org, chartctl.OutcomeSuccess)
}

func (a *App) appendAudit(ctx context.Context, action, target, org string, outcome chartctl.Outcome) {
	if a.noAudit {
		return
	}
	e := &chartctl.AuditEntry{Time: a.Now().UTC(), Actor: chartctl.ActorFrom(ctx), Action: action, Target: target, Outcome: outcome, Organization: org}
	if err := a.Store.AppendAudit(context.WithoutCancel(ctx), e); err != nil {
		a.Logger.Error("append audit entry", "action", action, "err", err)
	}
}

// NewEvent returns an event of type typ placed in repo and org, about the
// resource at the /v1 path source (subject names it within), whose data
// is the resource as /v1 shows it plus the actor of ctx.
func (a *App) NewEvent(ctx context.Context, typ chartctl.EventType, repo, org, source, subject string, data map[string]any) *chartctl.Event {
	act := chartctl.ActorFrom(ctx)
	out := map[string]any{}
	for k, v := range data {
		out[k] = v
	}
	actor := map[string]any{"user_id": nil, "email": nil}
	if act.UserID != "" {
		actor = map[string]any{"user_id": act.UserID, "email": act.Email}
	}
	out["actor"] = actor
	b, err := json.Marshal(out)
	if err != nil {
		// Data are maps of strings, numbers and times: Marshal cannot fail.
		panic(err)
	}
	return &chartctl.Event{ID: NewID("evt_"), Type: typ, Time: a.Now().UTC(), Repository: repo, Organization: org,
		Source: source, Subject: subject, Data: b}
}

func ts(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

// RepositoryData is a repository as /v1 shows it.
func RepositoryData(r *chartctl.Repository) map[string]any {
	var org any
	if r.Organization != "" {
		org = r.Organization
	}
	d := map[string]any{"id": r.ID, "name": r.Name, "description": r.Description, "organization": org,
		"visibility": string(r.Visibility), "created_at": ts(r.CreatedAt)}
	if r.Mirror != nil {
		d["mirror"] = mirrorData(r.Mirror)
	}
	if r.Proxy != nil {
		d["proxy"] = proxyData(r.Proxy)
	}
	return d
}

// ChartData is a chart version as /v1 shows it, with its repository.
func ChartData(cv *chartctl.ChartVersion) map[string]any {
	d := map[string]any{"repository": cv.Repository, "name": cv.Name, "version": cv.Version, "description": cv.Description,
		"app_version": cv.AppVersion, "digest": cv.Digest, "size": cv.Size, "keywords": cv.Keywords, "created_at": ts(cv.CreatedAt)}
	if cv.Held() {
		d["held"], d["held_until"] = true, ts(*cv.HeldUntil)
	}
	return d
}

// MemberData is a team member as /v1 shows it, with its team.
func MemberData(team string, m *chartctl.Member) map[string]any {
	return map[string]any{"team": team, "id": m.ID, "email": m.Email, "role": string(m.Role), "added_at": ts(m.AddedAt)}
}

// APIKeyData is an API key as /v1 lists it (never its value), with its
// owner.
func APIKeyData(k *chartctl.APIKey, owner *chartctl.User) map[string]any {
	d := map[string]any{"id": k.ID, "name": k.Name, "scopes": k.Scopes.Strings(), "created_at": ts(k.CreatedAt)}
	if len(k.Repositories) > 0 {
		d["repositories"] = k.Repositories
	}
	if owner != nil {
		d["user"] = map[string]any{"id": owner.ID, "email": owner.Email}
	}
	return d
}

func repoPath(repo string) string { return "/v1/repositories/" + url.PathEscape(repo) }

// ChartTarget names a chart version in audit entries: "repo/name/version".
func ChartTarget(repo, name, version string) string { return repo + "/" + name + "/" + version }
