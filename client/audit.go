package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// AuditEntry is one entry of the audit log (CONTRACT §15).
type AuditEntry struct {
	ID    string    `json:"id"`
	Time  time.Time `json:"time"`
	Actor struct {
		UserID *string `json:"user_id"`
		Email  *string `json:"email"`
		// Robot is ORG/NAME when a robot account acted (its secret or a
		// credential exchanged for it); its Email is then robot$ORG+NAME.
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

// AuditOptions filter GET /v1/audit; zero fields match everything.
type AuditOptions struct {
	// Actor is a user ID or email; Action an action ("chart.delete") or a
	// resource ("chart"); Target a target as entries name it.
	Actor, Action, Target string
	Since, Until          time.Time
	// Cursor is the previous page's Response.Meta.NextCursor.
	Cursor string
	Limit  int
}

// AuditService reads the audit log.
type AuditService service

// List returns one page of entries, newest first; resp.Meta.NextCursor
// continues it.
func (s *AuditService) List(ctx context.Context, o *AuditOptions) ([]*AuditEntry, *Response, error) {
	q := url.Values{}
	if o != nil {
		for k, v := range map[string]string{"actor": o.Actor, "action": o.Action, "target": o.Target, "cursor": o.Cursor} {
			if v != "" {
				q.Set(k, v)
			}
		}
		if !o.Since.IsZero() {
			q.Set("since", o.Since.UTC().Format(time.RFC3339))
		}
		if !o.Until.IsZero() {
			q.Set("until", o.Until.UTC().Format(time.RFC3339))
		}
		if o.Limit > 0 {
			q.Set("limit", strconv.Itoa(o.Limit))
		}
	}
	req, err := s.client.NewRequest(http.MethodGet, withQuery("v1/audit", q), nil)
	if err != nil {
		return nil, nil, err
	}
	var out []*AuditEntry
	resp, err := s.client.Do(ctx, req, &out)
	return out, resp, err
}
