package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Webhook is a webhook as /v1 shows it (CONTRACT §15). Secret is set only
// in the answer to its creation.
type Webhook struct {
	ID             string    `json:"id"`
	URL            string    `json:"url"`
	Events         []string  `json:"events"`
	Active         bool      `json:"active"`
	CreatedAt      time.Time `json:"created_at"`
	DisabledReason *string   `json:"disabled_reason,omitempty"`
	// Repository or Organization names the webhook's scope; both nil for a
	// server-wide webhook.
	Repository   *string `json:"repository,omitempty"`
	Organization *string `json:"organization,omitempty"`
	Secret       string  `json:"secret,omitempty"`
}

// WebhookRequest is the body of webhook creation (url and events
// required) and of PATCH /v1/webhooks/:id (every field optional).
type WebhookRequest struct {
	URL    string   `json:"url,omitempty"`
	Events []string `json:"events,omitempty"`
	Secret string   `json:"secret,omitempty"`
	Active *bool    `json:"active,omitempty"`
}

// DeliveryAttempt is one try of a delivery.
type DeliveryAttempt struct {
	At              time.Time `json:"at"`
	StatusCode      *int      `json:"status_code"`
	DurationMS      int64     `json:"duration_ms"`
	ResponseExcerpt string    `json:"response_excerpt"`
}

// Delivery is an event on its way to a webhook; the attempt fields
// describe its latest attempt, Attempts all of them.
type Delivery struct {
	ID              string            `json:"id"`
	EventID         string            `json:"event_id"`
	EventType       string            `json:"event_type"`
	State           string            `json:"state"`
	Attempt         int               `json:"attempt"`
	StatusCode      *int              `json:"status_code"`
	DurationMS      *int64            `json:"duration_ms"`
	DeliveredAt     *time.Time        `json:"delivered_at"`
	NextAttemptAt   *time.Time        `json:"next_attempt_at"`
	ResponseExcerpt *string           `json:"response_excerpt"`
	Attempts        []DeliveryAttempt `json:"attempts"`
}

// WebhookScope names whose webhooks to list or create: a repository, an
// organization, or (both empty) the server's.
type WebhookScope struct {
	Repository   string
	Organization string
}

func (s WebhookScope) path() string {
	switch {
	case s.Repository != "":
		return "v1/repositories/" + url.PathEscape(s.Repository) + "/webhooks"
	case s.Organization != "":
		return "v1/organizations/" + url.PathEscape(s.Organization) + "/webhooks"
	}
	return "v1/admin/webhooks"
}

// WebhooksService manages webhooks (/v1/…/webhooks, /v1/webhooks/:id).
type WebhooksService service

// List returns every webhook of scope, walking the pages; the Response is
// the last page's.
func (s *WebhooksService) List(ctx context.Context, scope WebhookScope) ([]*Webhook, *Response, error) {
	return listAll(ctx, s.pager(scope))
}

// All iterates over the webhooks of scope, a page at a time.
func (s *WebhooksService) All(ctx context.Context, scope WebhookScope) iter.Seq2[*Webhook, error] {
	return paginate(ctx, ListOptions{}, s.pager(scope))
}

// pager returns the function that fetches one page of scope's webhooks.
func (s *WebhooksService) pager(scope WebhookScope) func(context.Context, *ListOptions) ([]*Webhook, *Response, error) {
	return func(ctx context.Context, opts *ListOptions) ([]*Webhook, *Response, error) {
		return getPage[Webhook](ctx, s.client, scope.path(), opts)
	}
}

// Create creates a webhook in scope; the answer's Secret is shown this
// once.
func (s *WebhooksService) Create(ctx context.Context, scope WebhookScope, r *WebhookRequest) (*Webhook, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, scope.path(), r)
	if err != nil {
		return nil, nil, err
	}
	out := new(Webhook)
	resp, err := s.client.Do(ctx, req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// Get returns one webhook.
func (s *WebhooksService) Get(ctx context.Context, id string) (*Webhook, *Response, error) {
	return s.one(ctx, http.MethodGet, "v1/webhooks/"+url.PathEscape(id), nil)
}

// Update changes the fields r sets.
func (s *WebhooksService) Update(ctx context.Context, id string, r *WebhookRequest) (*Webhook, *Response, error) {
	return s.one(ctx, http.MethodPatch, "v1/webhooks/"+url.PathEscape(id), r)
}

func (s *WebhooksService) one(ctx context.Context, method, path string, body any) (*Webhook, *Response, error) {
	req, err := s.client.NewRequest(method, path, body)
	if err != nil {
		return nil, nil, err
	}
	out := new(Webhook)
	resp, err := s.client.Do(ctx, req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// Delete deletes a webhook and its deliveries.
func (s *WebhooksService) Delete(ctx context.Context, id string) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodDelete, "v1/webhooks/"+url.PathEscape(id), nil)
	if err != nil {
		return nil, err
	}
	return s.client.Do(ctx, req, nil)
}

// Ping queues a ping event to the webhook.
func (s *WebhooksService) Ping(ctx context.Context, id string) (*Delivery, *Response, error) {
	return s.delivery(ctx, "v1/webhooks/"+url.PathEscape(id)+"/ping")
}

// Redeliver queues the event of one delivery again.
func (s *WebhooksService) Redeliver(ctx context.Context, id, delivery string) (*Delivery, *Response, error) {
	return s.delivery(ctx, "v1/webhooks/"+url.PathEscape(id)+"/deliveries/"+url.PathEscape(delivery)+"/redeliver")
}

func (s *WebhooksService) delivery(ctx context.Context, path string) (*Delivery, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, path, nil)
	if err != nil {
		return nil, nil, err
	}
	out := new(Delivery)
	resp, err := s.client.Do(ctx, req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// Deliveries returns the webhook's latest deliveries, newest first (at
// most limit; 0 for the server's default).
func (s *WebhooksService) Deliveries(ctx context.Context, id string, limit int) ([]*Delivery, *Response, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	req, err := s.client.NewRequest(http.MethodGet, withQuery("v1/webhooks/"+url.PathEscape(id)+"/deliveries", q), nil)
	if err != nil {
		return nil, nil, err
	}
	var out []*Delivery
	resp, err := s.client.Do(ctx, req, &out)
	return out, resp, err
}
