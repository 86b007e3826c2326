package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// auditActions names the audit action of every mutating route, by
// "METHOD pattern". A successful request is audited by the application
// layer in the transaction of its change; a refused or failed one by
// auditFailures, with this name. A test sends a request to every mutating
// route of the route table and fails for a route missing here or leaving
// no entry.
var auditActions = map[string]string{
	"POST /v1/organizations/:org/robots/:name/publishers":       "publisher.add",
	"DELETE /v1/organizations/:org/robots/:name/publishers/:id": "publisher.remove",
	// Exchanges audit themselves, refusals with the failed check
	// (app.ExchangeToken); audit adds an entry only for a failure there.
	"POST /v1/oidc/token":                                  "oidc.exchange",
	"POST /v1/user/api-keys":                               "api_key.create",
	"DELETE /v1/user/api-keys/:id":                         "api_key.revoke",
	"POST /v1/users":                                       "user.create",
	"PATCH /v1/users/:email":                               "user.update",
	"DELETE /v1/users/:email":                              "user.delete",
	"POST /v1/users/:email/api-keys":                       "api_key.create",
	"DELETE /v1/users/:email/api-keys/:id":                 "api_key.revoke",
	"POST /v1/repositories":                                "repository.create",
	"PATCH /v1/repositories/:repo":                         "repository.update",
	"DELETE /v1/repositories/:repo":                        "repository.delete",
	"POST /v1/repositories/:repo/sync":                     "repository.sync",
	"DELETE /v1/repositories/:repo/cache":                  "repository.cache_purge",
	"POST /v1/repositories/:repo/charts":                   "chart.push",
	"DELETE /v1/repositories/:repo/charts/:name/:version":  "chart.delete",
	"POST /v1/organizations":                               "organization.create",
	"DELETE /v1/organizations/:org":                        "organization.delete",
	"POST /v1/repositories/:repo/access":                   "repository.access_granted",
	"DELETE /v1/repositories/:repo/access/:kind/:name":     "repository.access_revoked",
	"POST /v1/teams":                                       "team.create",
	"PATCH /v1/teams/:team":                                "team.update",
	"POST /v1/admin/scim-tokens":                           "scim_token.create",
	"DELETE /v1/admin/scim-tokens/:id":                     "scim_token.revoke",
	"POST /v1/repositories/:repo/trust":                    "trust.add",
	"DELETE /v1/repositories/:repo/trust/:name":            "trust.remove",
	"POST /v1/organizations/:org/trust":                    "trust.add",
	"DELETE /v1/organizations/:org/trust/:name":            "trust.remove",
	"PUT /v1/repositories/:repo/policy":                    "policy.update",
	"PUT /v1/repositories/:repo/artifacthub":               "repository.artifacthub",
	"PUT /v1/organizations/:org/policy":                    "policy.update",
	"POST /v1/teams/:team/members":                         "team.member_add",
	"PATCH /v1/teams/:team/members/:member":                "team.member_role_change",
	"DELETE /v1/teams/:team/members/:member":               "team.member_remove",
	"POST /v1/repositories/:repo/webhooks":                 "webhook.create",
	"POST /v1/organizations/:org/webhooks":                 "webhook.create",
	"POST /v1/admin/webhooks":                              "webhook.create",
	"PATCH /v1/webhooks/:id":                               "webhook.update",
	"POST /v1/replications":                                "replication.create",
	"DELETE /v1/replications/:name":                        "replication.delete",
	"POST /v1/replications/:name/run":                      "replication.run",
	"DELETE /v1/webhooks/:id":                              "webhook.delete",
	"POST /v1/webhooks/:id/ping":                           "webhook.ping",
	"POST /v1/webhooks/:id/deliveries/:delivery/redeliver": "webhook.redeliver",
	"POST /helm/api/:repo/charts":                          "chart.push",
	"DELETE /helm/api/:repo/charts/:name/:version":         "chart.delete",
	"PUT /v1/repositories/:repo/quota":                     "quota.set",
	"PUT /v1/organizations/:org/quota":                     "quota.set",
	"POST /v1/organizations/:org/robots":                   "robot.create",
	"PATCH /v1/organizations/:org/robots/:name":            "robot.update",
	"DELETE /v1/organizations/:org/robots/:name":           "robot.delete",
	"POST /v1/organizations/:org/robots/:name/rotate":      "robot.rotate",
	"POST /v1/admin/verify":                                "backup.verify",
	"GET /v1/admin/backup":                                 "backup.download",
	// Added by the authorization server when the serve command mounts it.
	"POST /v1/oauth-clients": "oauth_client.create",
	// The dashboard's forms (internal/web), mounted with it: their
	// successes are audited by the application layer like the API's, their
	// refusals (an error page with 403) and failures here.
	"POST /settings/api-keys":                           "api_key.create",
	"POST /settings/api-keys/:id/revoke":                "api_key.revoke",
	"POST /repositories/:repo/settings":                 "repository.update",
	"POST /repositories/:repo/delete":                   "repository.delete",
	"POST /repositories/:repo/sync":                     "repository.sync",
	"POST /teams/:team/members":                         "team.member_add",
	"POST /teams/:team/members/:member/role":            "team.member_role_change",
	"POST /teams/:team/members/:member/remove":          "team.member_remove",
	"POST /repositories/:repo/webhooks":                 "webhook.create",
	"POST /organizations/:org/webhooks":                 "webhook.create",
	"POST /admin/webhooks":                              "webhook.create",
	"POST /webhooks/:id/ping":                           "webhook.ping",
	"POST /webhooks/:id/delete":                         "webhook.delete",
	"POST /webhooks/:id/deliveries/:delivery/redeliver": "webhook.redeliver",
	"POST /settings/password":                           "user.password_change",
	"POST /settings/apps/:id/revoke":                    "oauth_grant.revoke",
	// Added by the registry when the serve command mounts it.
	"POST /v1/admin/gc":                         "registry.gc",
	"PUT /v1/repositories/:repo/retention":      "retention.set",
	"POST /v1/repositories/:repo/retention/run": "retention.run",
}

// auditedReads are the reads audited as writes are: a backup download
// exports every record of the server (password and key hashes, webhook
// secrets), so who took one, and who tried, is in the log.
var auditedReads = map[string]bool{
	"GET /v1/admin/backup": true,
}

const (
	actorKey    = "chartctl.actor"
	auditOrgKey = "chartctl.audit_org"
)

// audit runs next for the request, serving the audit log for writes and
// auditedReads; other reads pass straight through, so the download and
// index paths pay nothing. For an audited request it puts a
// chartctl.Actor (client address, request id; authentication fills in the
// user) in the request's context, which the application layer copies into
// the audit entries of the change, and it records a refused (401, 403:
// denied) or failed request to a route of auditActions on its own, with
// the organization of the resource it addressed, so that organization's
// owners see it. observe calls it (one middleware, not two: echo wraps
// every middleware anew on every request).
func (s *Server) audit(c echo.Context, next echo.HandlerFunc) error {
	m := c.Request().Method
	if (m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions) && !auditedReads[m+" "+c.Path()] {
		return next(c)
	}
	a := &chartctl.Actor{ClientIP: s.Config.TrustedProxies.ClientIP(c.Request()).String(),
		RequestID: c.Response().Header().Get(echo.HeaderXRequestID)}
	c.Set(actorKey, a)
	c.SetRequest(c.Request().WithContext(chartctl.WithActor(c.Request().Context(), a)))
	err := next(c)
	action, ok := auditActions[m+" "+c.Path()]
	if !ok {
		return err
	}
	if done, _ := c.Get(auditedKey).(bool); done {
		return err
	}
	outcome := chartctl.OutcomeFailed
	switch {
	case err != nil:
		switch chartctl.ErrorCode(err) {
		case chartctl.EUNAUTHORIZED, chartctl.EFORBIDDEN:
			outcome = chartctl.OutcomeDenied
		}
	case c.Response().Status == http.StatusUnauthorized || c.Response().Status == http.StatusForbidden:
		// A protocol that writes its own error bodies (ChartMuseum's).
		outcome = chartctl.OutcomeDenied
	case c.Response().Status < 400:
		return nil
	}
	s.app.AuditFailure(c.Request().Context(), action, c.Request().URL.Path, s.auditOrg(c), outcome)
	return err
}

// setAuditOrg names the organization a request addresses in its body
// (creating a repository or a team in one), for the audit entry of a
// refusal; organizations in the path are found by auditOrg itself.
func setAuditOrg(c echo.Context, org string) {
	c.Set(auditOrgKey, org)
}

// auditOrg returns the organization of the resource a refused or failed
// request addressed: the one its body named (setAuditOrg) or its :org
// path parameter, else the organization of its :repo, :team or webhook
// :id, if that exists; "" for server-wide and personal resources. It runs
// only for refused writes, so its store reads cost the hot path nothing.
func (s *Server) auditOrg(c echo.Context) string {
	// The entry is written even when the client went away; so are these
	// reads.
	ctx := context.WithoutCancel(c.Request().Context())
	param := func(name string) string {
		// A refusal can come before the parameters are decoded.
		v := c.Param(name)
		if d, err := url.PathUnescape(v); err == nil {
			return d
		}
		return v
	}
	name, _ := c.Get(auditOrgKey).(string)
	if name == "" {
		name = param("org")
	}
	if name != "" {
		// Only an organization that exists: one created later under the
		// name must not inherit the entry.
		if o, err := s.Store.Organization(ctx, name); err == nil {
			return o.Name
		}
		return ""
	}
	repo := param("repo")
	if team := param("team"); team != "" {
		if t, err := s.Store.Team(ctx, team); err == nil {
			return t.Organization
		}
		return ""
	}
	if id := param("id"); id != "" && strings.HasPrefix(strings.TrimPrefix(c.Path(), "/v1"), "/webhooks/") {
		w, err := s.Store.Webhook(ctx, id)
		if err != nil {
			return ""
		}
		if w.Organization != "" {
			return w.Organization
		}
		repo = w.Repository
	}
	if repo != "" {
		if r, err := s.Store.Repository(ctx, repo); err == nil {
			return r.Organization
		}
	}
	return ""
}

// setActor records the authenticated caller in the request's actor.
func setActor(c echo.Context, p *chartctl.Principal) {
	if a, ok := c.Get(actorKey).(*chartctl.Actor); ok {
		a.SetPrincipal(p)
	}
}
