package client

import (
	"context"
	"net/http"
	"net/url"
)

// AdminService runs server maintenance (server admins with a credential
// carrying every scope).
type AdminService service

// GCReport is what a registry garbage collection removed, or would remove
// in a dry run (the body's data of POST /v1/admin/gc).
type GCReport struct {
	// DryRun is set when nothing was removed.
	DryRun bool `json:"dry_run"`
	// Sessions are the expired upload sessions.
	Sessions []string `json:"sessions"`
	// Links are the unreferenced blob links, "name@digest".
	Links []string `json:"links"`
	// Blobs are the digests of blobs nothing refers to any more.
	Blobs []string `json:"blobs"`
	// Bytes is the size of those blobs.
	Bytes int64 `json:"bytes"`
}

// GC runs the OCI registry's garbage collection now; with dryRun it only
// reports what would go.
func (s *AdminService) GC(ctx context.Context, dryRun bool) (*GCReport, *Response, error) {
	q := url.Values{}
	if dryRun {
		q.Set("dry_run", "true")
	}
	req, err := s.client.NewRequest(http.MethodPost, withQuery("v1/admin/gc", q), nil)
	if err != nil {
		return nil, nil, err
	}
	rep := new(GCReport)
	resp, err := s.client.Do(ctx, req, rep)
	if err != nil {
		return nil, resp, err
	}
	return rep, resp, nil
}
