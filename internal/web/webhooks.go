package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file holds the webhook pages (CONTRACT §15): the webhooks of a
// repository (maintainers), of an organization (owners) and the
// server-wide ones (admins) — listed with their latest delivery, created
// (the secret shown once), pinged and deleted — and one webhook's page
// with its deliveries, each of which can be redelivered. Every read and
// write goes through the application layer, which decides who may; the
// pages only turn its refusals into error pages.

// WebhookScopePage names whose webhooks a page manages.
type WebhookScopePage struct {
	// Kind is "repository", "organization" or "server".
	Kind string
	// Name is the repository or organization ("" for the server).
	Name string
	// Path is the list page, which the create form posts to.
	Path string
	// Title heads the page.
	Title string
}

func (s WebhookScopePage) scope() app.WebhookScope {
	switch s.Kind {
	case "repository":
		return app.WebhookScope{Repository: s.Name}
	case "organization":
		return app.WebhookScope{Organization: s.Name}
	}
	return app.WebhookScope{}
}

// scopeOf returns the scope page of webhook w.
func scopeOf(w *chartctl.Webhook) WebhookScopePage {
	switch {
	case w.Repository != "":
		return WebhookScopePage{Kind: "repository", Name: w.Repository, Path: "/repositories/" + url.PathEscape(w.Repository) + "/webhooks", Title: "Webhooks of " + w.Repository}
	case w.Organization != "":
		return WebhookScopePage{Kind: "organization", Name: w.Organization, Path: "/organizations/" + url.PathEscape(w.Organization) + "/webhooks", Title: "Webhooks of organization " + w.Organization}
	}
	return WebhookScopePage{Kind: "server", Path: "/admin/webhooks", Title: "Server-wide webhooks"}
}

// WebhooksPage lists the webhooks of a scope with their latest delivery
// and offers a form to add one. Secret is set once, right after creating.
type WebhooksPage struct {
	Scope    WebhookScopePage
	Webhooks []WebhookRow
	// EventTypes are the choices of the form; Form holds what was sent.
	EventTypes []string
	FormURL    string
	FormEvents map[string]bool
	Error      string
	Created    *WebhookRow
	Secret     string
}

// WebhookRow is one webhook and how its latest delivery went.
type WebhookRow struct {
	*chartctl.Webhook
	// Last describes the latest delivery ("chart.pushed delivered: HTTP
	// 204", "ping pending: HTTP 503, next try 12:04 UTC"), "" if none yet.
	Last string
}

// webhookScopePage resolves the scope of a list page from its route.
func webhookScopePage(c echo.Context) WebhookScopePage {
	if r := c.Param("repo"); r != "" {
		return WebhookScopePage{Kind: "repository", Name: r, Path: "/repositories/" + url.PathEscape(r) + "/webhooks", Title: "Webhooks of " + r}
	}
	if o := c.Param("org"); o != "" {
		return WebhookScopePage{Kind: "organization", Name: o, Path: "/organizations/" + url.PathEscape(o) + "/webhooks", Title: "Webhooks of organization " + o}
	}
	return WebhookScopePage{Kind: "server", Path: "/admin/webhooks", Title: "Server-wide webhooks"}
}

func (d *Dashboard) webhookRows(c echo.Context, p *chartctl.Principal, sc WebhookScopePage) ([]WebhookRow, error) {
	ctx := c.Request().Context()
	hooks, err := d.opts.App.Webhooks(ctx, p, sc.scope())
	if err != nil {
		return nil, err
	}
	rows := make([]WebhookRow, 0, len(hooks))
	for _, w := range hooks {
		row := WebhookRow{Webhook: w}
		if ds, err := d.opts.App.Deliveries(ctx, p, w.ID, 1); err == nil && len(ds) > 0 {
			row.Last = deliverySummary(ds[0])
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// deliverySummary says in a few words how a delivery stands.
func deliverySummary(dl *chartctl.Delivery) string {
	s := string(dl.Event.Type) + " " + string(dl.State)
	if n := len(dl.Attempts); n > 0 {
		a := dl.Attempts[n-1]
		switch {
		case a.StatusCode != 0:
			s += ": HTTP " + strconv.Itoa(a.StatusCode)
		case a.ResponseExcerpt != "":
			s += ": " + a.ResponseExcerpt
		}
	}
	if dl.State == chartctl.DeliveryPending && dl.NextAttemptAt != nil && len(dl.Attempts) > 0 {
		s += ", next try " + dl.NextAttemptAt.UTC().Format(time.Kitchen+" MST")
	}
	return s
}

// eventChoices are the event types a scope's webhooks can receive:
// api_key.* events belong to no repository or organization, so only
// server-wide webhooks get them.
func eventChoices(sc WebhookScopePage) []string {
	var out []string
	for _, t := range chartctl.EventTypes {
		if sc.Kind != "server" && strings.HasPrefix(string(t), "api_key.") {
			continue
		}
		out = append(out, string(t))
	}
	return out
}

func (d *Dashboard) webhooksPage(c echo.Context) (*chartctl.Principal, *WebhooksPage, error) {
	p, err := d.viewer(c)
	if err != nil {
		return nil, nil, err
	}
	sc := webhookScopePage(c)
	wp := &WebhooksPage{Scope: sc, EventTypes: eventChoices(sc), FormEvents: map[string]bool{"chart.pushed": true}}
	if wp.Webhooks, err = d.webhookRows(c, p, sc); err != nil {
		return nil, nil, err
	}
	return p, wp, nil
}

// refuseWebhooks answers a refusal of the application layer: what p may
// not see is the 404 page, what p may see but not manage the 403 page.
func (d *Dashboard) refuseWebhooks(c echo.Context, err error) error {
	switch chartctl.ErrorCode(err) {
	case chartctl.ENOTFOUND:
		return d.notFound(c)
	case chartctl.EFORBIDDEN, chartctl.EUNAUTHORIZED:
		return d.RenderError(c, http.StatusForbidden, "Not allowed", chartctl.ErrorMessage(err))
	case chartctl.EUNAVAILABLE:
		return d.RenderError(c, http.StatusServiceUnavailable, "Not available", chartctl.ErrorMessage(err))
	}
	return err
}

func (d *Dashboard) renderWebhooks(c echo.Context, status int, wp *WebhooksPage) error {
	pg := d.page(c, wp.Scope.Title, "", "", wp)
	switch wp.Scope.Kind {
	case "repository":
		pg.Nav = "repos"
	case "server":
		pg.Nav = "admin"
	}
	if c.QueryParam("deleted") == "1" {
		pg.Flash = "The webhook was deleted, with its deliveries."
	}
	return d.render(c, status, "webhooks", pg)
}

func (d *Dashboard) handleWebhooks(c echo.Context) error {
	if d.opts.App == nil {
		return d.notFound(c)
	}
	_, wp, err := d.webhooksPage(c)
	if err != nil {
		return d.refuseWebhooks(c, err)
	}
	return d.renderWebhooks(c, http.StatusOK, wp)
}

func (d *Dashboard) handleCreateWebhook(c echo.Context) error {
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	if d.opts.App == nil {
		return d.notFound(c)
	}
	p, wp, err := d.webhooksPage(c)
	if err != nil {
		return d.refuseWebhooks(c, err)
	}
	form, err := c.FormParams()
	if err != nil {
		return d.RenderError(c, http.StatusBadRequest, "Bad request", "The form could not be read.")
	}
	u := strings.TrimSpace(form.Get("url"))
	events := form["events"]
	wp.FormURL, wp.FormEvents = u, map[string]bool{}
	for _, e := range events {
		wp.FormEvents[e] = true
	}
	w, secret, err := d.opts.App.CreateWebhook(c.Request().Context(), p, wp.Scope.scope(), app.WebhookInput{URL: &u, Events: events})
	if chartctl.ErrorCode(err) == chartctl.EINVALID {
		wp.Error = chartctl.ErrorMessage(err)
		return d.renderWebhooks(c, http.StatusBadRequest, wp)
	} else if err != nil {
		return d.refuseWebhooks(c, err)
	}
	wp.Created, wp.Secret = &WebhookRow{Webhook: w}, secret
	wp.FormURL, wp.FormEvents = "", map[string]bool{"chart.pushed": true}
	if wp.Webhooks, err = d.webhookRows(c, p, wp.Scope); err != nil {
		return err
	}
	return d.renderWebhooks(c, http.StatusOK, wp)
}

// WebhookPage is one webhook with its latest deliveries.
type WebhookPage struct {
	Webhook    *chartctl.Webhook
	Scope      WebhookScopePage
	Deliveries []DeliveryRow
}

// DeliveryRow is one delivery as the webhook page lists it.
type DeliveryRow struct {
	*chartctl.Delivery
	// Last is the latest attempt ("" before the first).
	Last *chartctl.Attempt
}

// deliveriesShown is how many deliveries the webhook page lists.
const deliveriesShown = 50

// manageableWebhook loads the webhook of the route that the signed-in
// user may manage.
func (d *Dashboard) manageableWebhook(c echo.Context) (*chartctl.Principal, *chartctl.Webhook, error) {
	if d.opts.App == nil {
		return nil, nil, chartctl.Errorf(chartctl.ENOTFOUND, "Webhooks are not available on this server.")
	}
	p, err := d.viewer(c)
	if err != nil {
		return nil, nil, err
	}
	w, _, err := d.opts.App.ManageableWebhook(c.Request().Context(), p, c.Param("id"))
	return p, w, err
}

func (d *Dashboard) handleWebhook(c echo.Context) error {
	p, w, err := d.manageableWebhook(c)
	if err != nil {
		return d.refuseWebhooks(c, err)
	}
	ds, err := d.opts.App.Deliveries(c.Request().Context(), p, w.ID, deliveriesShown)
	if err != nil {
		return d.refuseWebhooks(c, err)
	}
	wp := &WebhookPage{Webhook: w, Scope: scopeOf(w)}
	for _, dl := range ds {
		row := DeliveryRow{Delivery: dl}
		if n := len(dl.Attempts); n > 0 {
			row.Last = &dl.Attempts[n-1]
		}
		wp.Deliveries = append(wp.Deliveries, row)
	}
	pg := d.page(c, "Webhook "+w.URL, "", "", wp)
	switch c.QueryParam("done") {
	case "ping":
		pg.Flash = "A ping was queued. It is listed below; reload to see how it went."
	case "redeliver":
		pg.Flash = "The event was queued again as a new delivery."
	}
	return d.render(c, http.StatusOK, "webhook", pg)
}

func (d *Dashboard) handlePingWebhook(c echo.Context) error {
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	p, w, err := d.manageableWebhook(c)
	if err != nil {
		return d.refuseWebhooks(c, err)
	}
	if _, err := d.opts.App.PingWebhook(c.Request().Context(), p, w.ID); err != nil {
		return d.refuseWebhooks(c, err)
	}
	return c.Redirect(http.StatusSeeOther, "/webhooks/"+url.PathEscape(w.ID)+"?done=ping")
}

func (d *Dashboard) handleRedeliver(c echo.Context) error {
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	p, w, err := d.manageableWebhook(c)
	if err != nil {
		return d.refuseWebhooks(c, err)
	}
	if _, err := d.opts.App.Redeliver(c.Request().Context(), p, w.ID, c.Param("delivery")); err != nil {
		return d.refuseWebhooks(c, err)
	}
	return c.Redirect(http.StatusSeeOther, "/webhooks/"+url.PathEscape(w.ID)+"?done=redeliver")
}

// WebhookDeletePage asks to confirm deleting a webhook.
type WebhookDeletePage struct {
	Webhook *chartctl.Webhook
	Scope   WebhookScopePage
}

func (d *Dashboard) handleDeleteWebhookPage(c echo.Context) error {
	_, w, err := d.manageableWebhook(c)
	if err != nil {
		return d.refuseWebhooks(c, err)
	}
	return d.render(c, http.StatusOK, "webhook_delete", d.page(c, "Delete webhook", "", "", WebhookDeletePage{Webhook: w, Scope: scopeOf(w)}))
}

func (d *Dashboard) handleDeleteWebhook(c echo.Context) error {
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	p, w, err := d.manageableWebhook(c)
	if err != nil {
		return d.refuseWebhooks(c, err)
	}
	if err := d.opts.App.DeleteWebhook(c.Request().Context(), p, w.ID); err != nil {
		return d.refuseWebhooks(c, err)
	}
	return c.Redirect(http.StatusSeeOther, scopeOf(w).Path+"?deleted=1")
}
