package app

import (
	"context"
	"net/netip"
	"net/url"
	"strings"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/webhook"
)

// Sealer encrypts webhook secrets for the store and decrypts them (a
// *secrets.Box).
type Sealer interface {
	Seal(plaintext []byte) ([]byte, error)
	Open(sealed []byte) ([]byte, error)
}

// WebhookScope says whose a webhook is: a repository's, an
// organization's, or the server's (both empty).
type WebhookScope struct {
	Repository string
	// RepositoryID, when set, is the ID the repository must have (a
	// stored webhook's binding).
	RepositoryID string
	Organization string
}

// WebhookInput is what a caller sets on a webhook; nil fields are left
// as they are on update and take their defaults on create.
type WebhookInput struct {
	URL    *string
	Events []string
	Secret *string
	Active *bool
}

// authorizeScope checks that p may manage webhooks of scope (§15:
// repository webhooks repo:write and maintainer; organization webhooks
// org:write and owner; server-wide ones admin) and returns the
// organization the scope belongs to and the ID of its repository ("" for
// other scopes). A scope naming a repository also names its ID
// (sc.RepositoryID, the webhook's binding): a webhook bound to another
// repository of the name, a deleted one's, is not found.
func (a *App) authorizeScope(ctx context.Context, p *chartctl.Principal, sc WebhookScope) (org, repoID string, err error) {
	switch {
	case sc.Repository != "":
		r, err := a.WritableRepo(ctx, p, sc.Repository, SettingsRole)
		if err != nil {
			return "", "", err
		}
		if sc.RepositoryID != "" && sc.RepositoryID != r.ID {
			return "", "", chartctl.Errorf(chartctl.ENOTFOUND, "Repository %q not found.", sc.Repository)
		}
		return r.Organization, r.ID, nil
	case sc.Organization != "":
		if p == nil {
			return "", "", chartctl.Errorf(chartctl.EUNAUTHORIZED, "Authentication required.")
		}
		if !p.Scopes.Allows(chartctl.ScopeOrgWrite) {
			return "", "", chartctl.ScopeRequired(chartctl.ScopeOrgWrite)
		}
		notFound := chartctl.Errorf(chartctl.ENOTFOUND, "Organization %q not found.", sc.Organization)
		if chartctl.ValidateName("organization", sc.Organization) != nil {
			return "", "", notFound
		}
		if _, err := a.Store.Organization(ctx, sc.Organization); chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return "", "", notFound
		} else if err != nil {
			return "", "", err
		}
		if !p.CanSeeOrg(sc.Organization) {
			return "", "", notFound
		}
		if !p.IsAdmin() && !p.OrgRole(sc.Organization).AtLeast(chartctl.RoleOwner) {
			return "", "", chartctl.Errorf(chartctl.EFORBIDDEN, "Webhooks of organization %q need the owner role.", sc.Organization)
		}
		return sc.Organization, "", nil
	default:
		return "", "", RequireAdmin(p)
	}
}

// validateWebhookURL checks an absolute http(s) URL; a literal private
// address is refused at once unless allowed (names are checked again
// when each delivery connects).
func (a *App) validateWebhookURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(raw) > 2048 {
		return chartctl.Invalid("url", "url must be an absolute http or https URL of at most 2048 characters.")
	}
	if u.User != nil {
		return chartctl.Invalid("url", "url must not carry credentials; receivers verify the webhook-signature header instead.")
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && !a.Config.AllowPrivateWebhooks && netguard.PrivateAddr(ip) {
		return chartctl.Invalid("url", "url points to a private or loopback address (%s), which this server refuses (start it with --allow-private-webhooks to allow it).", ip)
	}
	return nil
}

func validateEvents(events []string) ([]string, error) {
	if len(events) == 0 {
		return nil, chartctl.Invalid("events", "events must list event types, or [\"*\"] for all.")
	}
	seen := map[string]bool{}
	var out []string
	for _, e := range events {
		if e != "*" && !chartctl.EventType(e).Valid() {
			names := make([]string, len(chartctl.EventTypes))
			for i, t := range chartctl.EventTypes {
				names[i] = string(t)
			}
			return nil, chartctl.Invalid("events", "Unknown event type %q: use %s, or \"*\".", e, strings.Join(names, ", "))
		}
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out, nil
}

// CreateWebhook creates a webhook of scope for p. A missing secret is
// generated; the secret is returned, the only time it is shown.
func (a *App) CreateWebhook(ctx context.Context, p *chartctl.Principal, sc WebhookScope, in WebhookInput) (*chartctl.Webhook, string, error) {
	org, repoID, err := a.authorizeScope(ctx, p, sc)
	if err != nil {
		return nil, "", err
	}
	if in.URL == nil {
		return nil, "", chartctl.Invalid("url", "url is required.")
	}
	if err := a.validateWebhookURL(*in.URL); err != nil {
		return nil, "", err
	}
	events, err := validateEvents(in.Events)
	if err != nil {
		return nil, "", err
	}
	if sc.Repository == "" && sc.Organization == "" {
		org = ""
	}
	secret := webhook.NewSecret()
	if in.Secret != nil && *in.Secret != "" {
		if err := webhook.ValidateSecret(*in.Secret); err != nil {
			return nil, "", err
		}
		secret = *in.Secret
	}
	sealed, err := a.seal(secret)
	if err != nil {
		return nil, "", err
	}
	// Bound to the repository p was authorized against: the store refuses
	// it if that repository was deleted meanwhile, even if another of the
	// name exists by then.
	w := &chartctl.Webhook{ID: NewID("wh_"), Repository: sc.Repository, RepositoryID: repoID, Organization: sc.Organization, URL: *in.URL, Events: events,
		Active: in.Active == nil || *in.Active, Secret: sealed, CreatedBy: p.User.ID, CreatedAt: a.Now().UTC()}
	if err := a.Store.CreateWebhook(a.Record(ctx, "webhook.create", w.ID, org), w); err != nil {
		return nil, "", err
	}
	return w, secret, nil
}

func (a *App) seal(secret string) ([]byte, error) {
	if a.Secrets == nil {
		return nil, chartctl.Errorf(chartctl.EUNAVAILABLE, "Webhooks are not available: the server has no secrets key.")
	}
	return a.Secrets.Seal([]byte(secret))
}

// Webhooks lists the webhooks of scope, which p must be allowed to manage.
func (a *App) Webhooks(ctx context.Context, p *chartctl.Principal, sc WebhookScope) ([]*chartctl.Webhook, error) {
	if _, _, err := a.authorizeScope(ctx, p, sc); err != nil {
		return nil, err
	}
	return a.Store.Webhooks(ctx, sc.Repository, sc.Organization)
}

// ManageableWebhook loads webhook id if p may manage it and returns it
// with its organization; one p may not manage is ENOTFOUND unless p can
// see its scope (then EFORBIDDEN as for the scope).
func (a *App) ManageableWebhook(ctx context.Context, p *chartctl.Principal, id string) (*chartctl.Webhook, string, error) {
	w, err := a.Store.Webhook(ctx, id)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, "", chartctl.Errorf(chartctl.ENOTFOUND, "Webhook %q not found.", id)
	} else if err != nil {
		return nil, "", err
	}
	org, _, err := a.authorizeScope(ctx, p, WebhookScope{Repository: w.Repository, RepositoryID: w.RepositoryID, Organization: w.Organization})
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, "", chartctl.Errorf(chartctl.ENOTFOUND, "Webhook %q not found.", id)
	}
	return w, org, err
}

// UpdateWebhook changes what in sets on webhook id.
func (a *App) UpdateWebhook(ctx context.Context, p *chartctl.Principal, id string, in WebhookInput) (*chartctl.Webhook, error) {
	w, org, err := a.ManageableWebhook(ctx, p, id)
	if err != nil {
		return nil, err
	}
	var upd chartctl.WebhookUpdate
	if in.URL != nil {
		if err := a.validateWebhookURL(*in.URL); err != nil {
			return nil, err
		}
		upd.URL = in.URL
	}
	if in.Events != nil {
		if upd.Events, err = validateEvents(in.Events); err != nil {
			return nil, err
		}
	}
	if in.Secret != nil {
		if err := webhook.ValidateSecret(*in.Secret); err != nil {
			return nil, err
		}
		if upd.Secret, err = a.seal(*in.Secret); err != nil {
			return nil, err
		}
	}
	upd.Active = in.Active
	out, err := a.Store.UpdateWebhook(a.Record(ctx, "webhook.update", w.ID, org), w.ID, upd)
	if err != nil {
		return nil, err
	}
	if out.Active {
		a.Committed()
	}
	return out, nil
}

// DeleteWebhook deletes webhook id with its deliveries.
func (a *App) DeleteWebhook(ctx context.Context, p *chartctl.Principal, id string) error {
	w, org, err := a.ManageableWebhook(ctx, p, id)
	if err != nil {
		return err
	}
	return a.Store.DeleteWebhook(a.Record(ctx, "webhook.delete", w.ID, org), w.ID)
}

// PingWebhook queues a ping event to webhook id.
func (a *App) PingWebhook(ctx context.Context, p *chartctl.Principal, id string) (*chartctl.Delivery, error) {
	w, org, err := a.ManageableWebhook(ctx, p, id)
	if err != nil {
		return nil, err
	}
	e := a.NewEvent(ctx, chartctl.EventPing, w.Repository, w.Organization, "/v1/webhooks/"+w.ID, w.ID,
		map[string]any{"webhook": map[string]any{"id": w.ID, "url": w.URL, "events": w.Events}})
	d, err := a.Store.EnqueueEvent(a.Record(ctx, "webhook.ping", w.ID, org), w.ID, e)
	if err != nil {
		return nil, err
	}
	a.Committed()
	return d, nil
}

// Deliveries lists the latest deliveries of webhook id.
func (a *App) Deliveries(ctx context.Context, p *chartctl.Principal, id string, limit int) ([]*chartctl.Delivery, error) {
	w, _, err := a.ManageableWebhook(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return a.Store.Deliveries(ctx, w.ID, limit)
}

// Redeliver queues the event of one delivery of webhook id again.
func (a *App) Redeliver(ctx context.Context, p *chartctl.Principal, id, deliveryID string) (*chartctl.Delivery, error) {
	w, org, err := a.ManageableWebhook(ctx, p, id)
	if err != nil {
		return nil, err
	}
	d, err := a.Store.Redeliver(a.Record(ctx, "webhook.redeliver", w.ID+"/"+deliveryID, org), w.ID, deliveryID)
	if err != nil {
		return nil, err
	}
	a.Committed()
	return d, nil
}
