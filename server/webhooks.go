package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/text"
)

// This file holds the webhook endpoints of §15 and GET /v1/audit. The
// application layer decides who may do what and records every change.

func toWebhook(w *chartctl.Webhook) client.Webhook {
	out := client.Webhook{ID: w.ID, URL: w.URL, Events: w.Events, Active: w.Active, CreatedAt: ts(w.CreatedAt)}
	if w.DisabledReason != "" {
		r := w.DisabledReason
		out.DisabledReason = &r
	}
	if w.Repository != "" {
		r := w.Repository
		out.Repository = &r
	}
	if w.Organization != "" {
		o := w.Organization
		out.Organization = &o
	}
	return out
}

func toDelivery(d *chartctl.Delivery) client.Delivery {
	out := client.Delivery{ID: d.ID, EventID: d.Event.ID, EventType: string(d.Event.Type), State: string(d.State),
		Attempt: len(d.Attempts), NextAttemptAt: tsp(d.NextAttemptAt), Attempts: []client.DeliveryAttempt{}}
	if d.State != chartctl.DeliveryPending {
		out.NextAttemptAt = nil
	}
	for _, a := range d.Attempts {
		da := client.DeliveryAttempt{At: ts(a.At), DurationMS: a.Duration.Milliseconds(), ResponseExcerpt: a.ResponseExcerpt}
		if a.StatusCode != 0 {
			sc := a.StatusCode
			da.StatusCode = &sc
		}
		out.Attempts = append(out.Attempts, da)
	}
	if n := len(out.Attempts); n > 0 {
		last := out.Attempts[n-1]
		out.StatusCode, out.ResponseExcerpt = last.StatusCode, &last.ResponseExcerpt
		ms := last.DurationMS
		out.DurationMS = &ms
		if d.State == chartctl.DeliveryDelivered {
			at := last.At
			out.DeliveredAt = &at
		}
	}
	return out
}

// webhookBody is the request body of create and update: absent fields
// stay nil.
type webhookBody struct {
	URL    *string  `json:"url"`
	Events []string `json:"events"`
	Secret *string  `json:"secret"`
	Active *bool    `json:"active"`
}

func (b webhookBody) input() app.WebhookInput {
	return app.WebhookInput{URL: b.URL, Events: b.Events, Secret: b.Secret, Active: b.Active}
}

func webhookScope(c echo.Context) app.WebhookScope {
	return app.WebhookScope{Repository: c.Param("repo"), Organization: c.Param("org")}
}

// handleListWebhooks lists the webhooks of a repository, an organization
// or the server.
func (s *Server) handleListWebhooks(c echo.Context) error {
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	hooks, err := s.app.Webhooks(c.Request().Context(), httpx.PrincipalOf(c), webhookScope(c))
	if err != nil {
		return err
	}
	return httpx.ListPage(c, hooks, pg, toWebhook)
}

// handleCreateWebhook creates a webhook; the answer carries its secret,
// the only time it is shown.
func (s *Server) handleCreateWebhook(c echo.Context) error {
	var req webhookBody
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	w, secret, err := s.app.CreateWebhook(c.Request().Context(), httpx.PrincipalOf(c), webhookScope(c), req.input())
	if err != nil {
		return err
	}
	out := toWebhook(w)
	out.Secret = secret
	return httpx.Data(c, out)
}

// handleGetWebhook returns one webhook.
func (s *Server) handleGetWebhook(c echo.Context) error {
	w, _, err := s.app.ManageableWebhook(c.Request().Context(), httpx.PrincipalOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return httpx.Data(c, toWebhook(w))
}

// handleUpdateWebhook changes a webhook's URL, events, secret or state.
func (s *Server) handleUpdateWebhook(c echo.Context) error {
	var req webhookBody
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	w, err := s.app.UpdateWebhook(c.Request().Context(), httpx.PrincipalOf(c), c.Param("id"), req.input())
	if err != nil {
		return err
	}
	return httpx.Data(c, toWebhook(w))
}

// handleDeleteWebhook deletes a webhook with its deliveries.
func (s *Server) handleDeleteWebhook(c echo.Context) error {
	if err := s.app.DeleteWebhook(c.Request().Context(), httpx.PrincipalOf(c), c.Param("id")); err != nil {
		return err
	}
	return httpx.Data(c, map[string]any{"id": c.Param("id"), "deleted": true})
}

// handlePingWebhook queues a ping.
func (s *Server) handlePingWebhook(c echo.Context) error {
	d, err := s.app.PingWebhook(c.Request().Context(), httpx.PrincipalOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return httpx.Data(c, toDelivery(d))
}

// handleListDeliveries lists a webhook's latest deliveries, newest first.
func (s *Server) handleListDeliveries(c echo.Context) error {
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	ds, err := s.app.Deliveries(c.Request().Context(), httpx.PrincipalOf(c), c.Param("id"), 1000)
	if err != nil {
		return err
	}
	return httpx.ListPage(c, ds, pg, toDelivery)
}

// handleRedeliver queues a delivery's event again.
func (s *Server) handleRedeliver(c echo.Context) error {
	d, err := s.app.Redeliver(c.Request().Context(), httpx.PrincipalOf(c), c.Param("id"), c.Param("delivery"))
	if err != nil {
		return err
	}
	return httpx.Data(c, toDelivery(d))
}

type auditItem struct {
	ID    string    `json:"id"`
	Time  time.Time `json:"time"`
	Actor struct {
		UserID *string `json:"user_id"`
		Email  *string `json:"email"`
		// Robot is ORG/NAME when a robot account acted (its secret or a
		// credential exchanged for it).
		Robot string `json:"robot,omitempty"`
	} `json:"actor"`
	Credential struct {
		ID   *string `json:"id"`
		Kind *string `json:"kind"`
	} `json:"credential"`
	ClientIP  string `json:"client_ip"`
	Action    string `json:"action"`
	Target    string `json:"target"`
	Outcome   string `json:"outcome"`
	RequestID string `json:"request_id"`
}

func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toAuditItem(e *chartctl.AuditEntry) auditItem {
	out := auditItem{ID: e.ID, Time: ts(e.Time), ClientIP: e.Actor.ClientIP, Action: e.Action, Target: e.Target,
		Outcome: string(e.Outcome), RequestID: e.Actor.RequestID}
	out.Actor.UserID, out.Actor.Email = strp(e.Actor.UserID), strp(e.Actor.Email)
	out.Credential.ID, out.Credential.Kind = strp(e.Actor.CredentialID), strp(e.Actor.CredentialKind)
	out.Actor.Robot = e.Actor.Robot
	if org, name, ok := chartctl.ParseRobotUserName(e.Actor.Email); ok && out.Actor.Robot == "" {
		// The stores keep the actor's email, which for a robot is its
		// user name (robot$ORG+NAME): the robot is named from it.
		out.Actor.Robot = org + "/" + name
	}
	return out
}

// handleAudit lists the audit log, newest first, with cursor pagination:
// all of it for server admins, an organization's entries for its owners.
func (s *Server) handleAudit(c echo.Context) error {
	p := httpx.PrincipalOf(c)
	f := chartctl.AuditFilter{Actor: c.QueryParam("actor"), Action: c.QueryParam("action"), Target: c.QueryParam("target"),
		Cursor: c.QueryParam("cursor"), Limit: 50}
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return chartctl.Invalid("limit", "limit must be an integer from 1 to 100.")
		}
		f.Limit = n
	}
	for name, dst := range map[string]*time.Time{"since": &f.Since, "until": &f.Until} {
		v := c.QueryParam(name)
		if v == "" {
			continue
		}
		t, err := parseAuditTime(v, s.Now())
		if err != nil {
			return chartctl.Invalid(name, "%s must be an RFC 3339 time (2026-01-02T15:04:05Z) or an age such as 24h or 7d.", name)
		}
		*dst = t
	}
	if err := app.RequireAdmin(p); err != nil {
		org := c.QueryParam("organization")
		if org == "" {
			for o, r := range p.OrgRoles {
				if r == chartctl.RoleOwner {
					if org != "" {
						return chartctl.Invalid("organization", "You own several organizations: name one with ?organization=.")
					}
					org = o
				}
			}
		}
		if org == "" || !p.OrgRole(org).AtLeast(chartctl.RoleOwner) || !p.Scopes.Allows(chartctl.ScopeOrgRead) {
			return err
		}
		f.Organization = org
	} else if org := c.QueryParam("organization"); org != "" {
		f.Organization = org
	}
	entries, next, err := s.Store.AuditLog(c.Request().Context(), f)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(c, http.StatusOK, struct {
		Data []auditItem `json:"data"`
		Meta struct {
			NextCursor *string `json:"next_cursor"`
			Limit      int     `json:"limit"`
		} `json:"meta"`
	}{Data: httpx.MapSlice(entries, toAuditItem), Meta: struct {
		NextCursor *string `json:"next_cursor"`
		Limit      int     `json:"limit"`
	}{strp(next), f.Limit}})
}

// parseAuditTime reads an RFC 3339 time or an age before now ("90m",
// "24h", "7d").
func parseAuditTime(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	d, err := text.ParseDuration(v)
	if err != nil {
		return time.Time{}, err
	}
	return now.Add(-d), nil
}
