package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// WebhooksPage lists a repository's webhooks with their latest delivery
// and offers a form to add one. Secret is set once, right after creating.
type WebhooksPage struct {
	Repo     *chartctl.Repository
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
	// Last describes the latest delivery ("delivered: 204", "pending:
	// HTTP 503, next try 12:04 UTC"), "" if none yet.
	Last string
}

func (d *Dashboard) webhookRows(c echo.Context, p *chartctl.Principal, repo string) ([]WebhookRow, error) {
	ctx := c.Request().Context()
	hooks, err := d.opts.App.Webhooks(ctx, p, app.WebhookScope{Repository: repo})
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
	if dl.State == chartctl.DeliveryPending && dl.NextAttemptAt != nil {
		s += ", next try " + dl.NextAttemptAt.UTC().Format(time.Kitchen+" MST")
	}
	return s
}

func (d *Dashboard) webhooksPage(c echo.Context) (*chartctl.Principal, *WebhooksPage, error) {
	p, err := d.viewer(c)
	if err != nil {
		return nil, nil, err
	}
	r, err := d.opts.App.WritableRepo(c.Request().Context(), p, c.Param("repo"), chartctl.RoleMaintainer)
	if err != nil {
		return nil, nil, err
	}
	wp := &WebhooksPage{Repo: r, FormEvents: map[string]bool{"chart.pushed": true}}
	for _, t := range chartctl.EventTypes {
		wp.EventTypes = append(wp.EventTypes, string(t))
	}
	if wp.Webhooks, err = d.webhookRows(c, p, r.Name); err != nil {
		return nil, nil, err
	}
	return p, wp, nil
}

func (d *Dashboard) refuseWebhooks(c echo.Context, err error) error {
	switch chartctl.ErrorCode(err) {
	case chartctl.ENOTFOUND:
		return d.RenderError(c, http.StatusNotFound, "Repository not found", "There is no repository with this name that you can see.")
	case chartctl.EFORBIDDEN:
		return d.RenderError(c, http.StatusForbidden, "Not allowed", chartctl.ErrorMessage(err))
	}
	return err
}

func (d *Dashboard) handleWebhooks(c echo.Context) error {
	if d.opts.App == nil {
		return d.RenderError(c, http.StatusNotFound, "Not available", "Webhooks are not available on this server.")
	}
	_, wp, err := d.webhooksPage(c)
	if err != nil {
		return d.refuseWebhooks(c, err)
	}
	return d.render(c, http.StatusOK, "webhooks", d.page(c, wp.Repo.Name+" webhooks", "repos", "", wp))
}

func (d *Dashboard) handleCreateWebhook(c echo.Context) error {
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	if d.opts.App == nil {
		return d.RenderError(c, http.StatusNotFound, "Not available", "Webhooks are not available on this server.")
	}
	p, wp, err := d.webhooksPage(c)
	if err != nil {
		return d.refuseWebhooks(c, err)
	}
	form, err := c.FormParams()
	if err != nil {
		return d.RenderError(c, http.StatusBadRequest, "Bad request", "The form could not be read.")
	}
	url := strings.TrimSpace(form.Get("url"))
	events := form["events"]
	wp.FormURL, wp.FormEvents = url, map[string]bool{}
	for _, e := range events {
		wp.FormEvents[e] = true
	}
	w, secret, err := d.opts.App.CreateWebhook(c.Request().Context(), p, app.WebhookScope{Repository: wp.Repo.Name}, app.WebhookInput{URL: &url, Events: events})
	if chartctl.ErrorCode(err) == chartctl.EINVALID {
		wp.Error = chartctl.ErrorMessage(err)
		return d.render(c, http.StatusBadRequest, "webhooks", d.page(c, wp.Repo.Name+" webhooks", "repos", "", wp))
	} else if err != nil {
		return d.refuseWebhooks(c, err)
	}
	wp.Created, wp.Secret = &WebhookRow{Webhook: w}, secret
	wp.FormURL, wp.FormEvents = "", map[string]bool{"chart.pushed": true}
	if wp.Webhooks, err = d.webhookRows(c, p, wp.Repo.Name); err != nil {
		return err
	}
	return d.render(c, http.StatusOK, "webhooks", d.page(c, wp.Repo.Name+" webhooks", "repos", "", wp))
}
