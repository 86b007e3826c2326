package client

import (
	"context"
	"net/http"
	"net/url"
)

// Quota is a repository's or organization's quota and usage (§15); a nil
// limit is unlimited.
type Quota struct {
	MaxBytes     *int64 `json:"max_bytes"`
	MaxVersions  *int64 `json:"max_versions"`
	UsedBytes    int64  `json:"used_bytes"`
	UsedVersions int64  `json:"used_versions"`
}

// SetQuotaRequest is the body of PUT …/quota: it replaces the whole
// quota (an omitted limit is unlimited).
type SetQuotaRequest struct {
	MaxBytes    *int64 `json:"max_bytes"`
	MaxVersions *int64 `json:"max_versions"`
}

func quotaPath(repo, org string) string {
	if repo != "" {
		return "v1/repositories/" + url.PathEscape(repo) + "/quota"
	}
	return "v1/organizations/" + url.PathEscape(org) + "/quota"
}

// Quota returns a repository's quota and usage.
func (s *RepositoriesService) Quota(ctx context.Context, repo string) (*Quota, *Response, error) {
	return doQuota(ctx, s.client, http.MethodGet, quotaPath(repo, ""), nil)
}

// SetQuota replaces a repository's quota.
func (s *RepositoriesService) SetQuota(ctx context.Context, repo string, r *SetQuotaRequest) (*Quota, *Response, error) {
	return doQuota(ctx, s.client, http.MethodPut, quotaPath(repo, ""), r)
}

// Quota returns an organization's quota and usage.
func (s *OrganizationsService) Quota(ctx context.Context, org string) (*Quota, *Response, error) {
	return doQuota(ctx, s.client, http.MethodGet, quotaPath("", org), nil)
}

// SetQuota replaces an organization's quota (server admins).
func (s *OrganizationsService) SetQuota(ctx context.Context, org string, r *SetQuotaRequest) (*Quota, *Response, error) {
	return doQuota(ctx, s.client, http.MethodPut, quotaPath("", org), r)
}

func doQuota(ctx context.Context, c *Client, method, path string, body any) (*Quota, *Response, error) {
	req, err := c.NewRequest(method, path, body)
	if err != nil {
		return nil, nil, err
	}
	out := new(Quota)
	resp, err := c.Do(ctx, req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}
