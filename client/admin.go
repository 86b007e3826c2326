package client

import (
	"context"
	"io"
	"net/http"
	"net/url"
)

// AdminService runs server maintenance: backups, verification and the
// registry's garbage collection (server admins with the admin scope).
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

// BackupMediaType is the media type of a backup archive.
const BackupMediaType = "application/vnd.chartctl.backup.v1.tar"

// VerifyProblem is one thing wrong with a store or a backup.
type VerifyProblem struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Detail string `json:"detail"`
}

// VerifyChecked counts what a verification looked at.
type VerifyChecked struct {
	Repositories  int   `json:"repositories"`
	ChartVersions int   `json:"chart_versions"`
	Blobs         int   `json:"blobs"`
	Bytes         int64 `json:"bytes"`
}

// VerifyResult is the answer of POST /v1/admin/verify.
type VerifyResult struct {
	OK       bool            `json:"ok"`
	Checked  VerifyChecked   `json:"checked"`
	Problems []VerifyProblem `json:"problems"`
}

// Backup streams a consistent backup of the server into w
// (GET /v1/admin/backup). A failure on the server after the archive began
// cuts it short; check it with the backup's reader before trusting it.
func (s *AdminService) Backup(ctx context.Context, w io.Writer) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodGet, "v1/admin/backup", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", BackupMediaType)
	return s.client.Do(ctx, req, w)
}

// Verify checks the server's live store and blobs (POST /v1/admin/verify).
func (s *AdminService) Verify(ctx context.Context) (*VerifyResult, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, "v1/admin/verify", nil)
	if err != nil {
		return nil, nil, err
	}
	out := new(VerifyResult)
	resp, err := s.client.Do(ctx, req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// CreateSCIMToken makes a bearer token for a SCIM client (POST
// /v1/admin/scim-tokens); the answer's Token is the only time its value
// is shown.
func (s *AdminService) CreateSCIMToken(ctx context.Context, r *CreateSCIMTokenRequest) (*SCIMToken, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, "v1/admin/scim-tokens", r)
	if err != nil {
		return nil, nil, err
	}
	t := new(SCIMToken)
	resp, err := s.client.Do(ctx, req, t)
	if err != nil {
		return nil, resp, err
	}
	return t, resp, nil
}

// SCIMTokens lists the SCIM tokens, never their values (GET
// /v1/admin/scim-tokens).
func (s *AdminService) SCIMTokens(ctx context.Context, opts *ListOptions) ([]*SCIMToken, *Response, error) {
	return getPage[SCIMToken](ctx, s.client, "v1/admin/scim-tokens", opts)
}

// RevokeSCIMToken deletes a SCIM token (DELETE /v1/admin/scim-tokens/:id).
func (s *AdminService) RevokeSCIMToken(ctx context.Context, id string) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodDelete, "v1/admin/scim-tokens/"+url.PathEscape(id), nil)
	if err != nil {
		return nil, err
	}
	return s.client.Do(ctx, req, nil)
}
