package client

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Policy is an admission policy (CONTRACT §18): a repository's, or the
// floor an organization sets for all its repositories.
type Policy struct {
	// RequireSignature is "none", "any" or a trust entry's name.
	RequireSignature string `json:"require_signature"`
	// HoldWindow is a duration ("10m"); "0s" refuses unsigned charts at
	// once.
	HoldWindow        string   `json:"hold_window"`
	Lint              string   `json:"lint"`
	ValuesSchema      bool     `json:"values_schema"`
	RequiredFields    []string `json:"required_fields"`
	NamePattern       string   `json:"name_pattern"`
	AllowPrerelease   bool     `json:"allow_prerelease"`
	MonotonicVersions bool     `json:"monotonic_versions"`
	ImagesPinned      bool     `json:"images_pinned"`
	// MaxSize is the largest archive accepted, in bytes (0: no limit).
	MaxSize   int64      `json:"max_size"`
	DenyFiles []string   `json:"deny_files"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
}

// RepositoryPolicy is a repository's policy and, in Effective, what its
// charts meet once its organization's floor applies.
type RepositoryPolicy struct {
	Policy
	Effective Policy `json:"effective"`
}

// PolicyUpdate is the body of a PUT of a policy. It replaces the policy
// whole; a field left out (nil) takes the organization floor's value for
// a repository, the default (refusing nothing) for an organization.
type PolicyUpdate struct {
	RequireSignature  *string   `json:"require_signature,omitempty"`
	HoldWindow        *string   `json:"hold_window,omitempty"`
	Lint              *string   `json:"lint,omitempty"`
	ValuesSchema      *bool     `json:"values_schema,omitempty"`
	RequiredFields    *[]string `json:"required_fields,omitempty"`
	NamePattern       *string   `json:"name_pattern,omitempty"`
	AllowPrerelease   *bool     `json:"allow_prerelease,omitempty"`
	MonotonicVersions *bool     `json:"monotonic_versions,omitempty"`
	ImagesPinned      *bool     `json:"images_pinned,omitempty"`
	MaxSize           *int64    `json:"max_size,omitempty"`
	DenyFiles         *[]string `json:"deny_files,omitempty"`
}

// Finding is a rule of an admission policy a chart broke, or a warning
// kept on it.
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// ChartCheck is the answer of a dry-run upload: the chart met the
// repository's admission policy (a refusal is a 422 policy_violation
// *Error) with these findings, and nothing was stored.
type ChartCheck struct {
	Name     string    `json:"name"`
	Version  string    `json:"version"`
	DryRun   bool      `json:"dry_run"`
	Findings []Finding `json:"findings"`
}

func repoPolicyPath(repo string) string {
	return "v1/repositories/" + url.PathEscape(repo) + "/policy"
}

func orgPolicyPath(org string) string {
	return "v1/organizations/" + url.PathEscape(org) + "/policy"
}

// Policy returns a repository's admission policy.
func (s *RepositoriesService) Policy(ctx context.Context, repo string) (*RepositoryPolicy, *Response, error) {
	out := new(RepositoryPolicy)
	resp, err := s.client.call(ctx, http.MethodGet, repoPolicyPath(repo), nil, out)
	return out, resp, err
}

// SetPolicy replaces a repository's admission policy (maintain role). A
// policy looser than the organization's floor is a 422 policy_violation.
func (s *RepositoriesService) SetPolicy(ctx context.Context, repo string, p *PolicyUpdate) (*RepositoryPolicy, *Response, error) {
	out := new(RepositoryPolicy)
	resp, err := s.client.call(ctx, http.MethodPut, repoPolicyPath(repo), p, out)
	return out, resp, err
}

// Policy returns an organization's admission policy floor.
func (s *OrganizationsService) Policy(ctx context.Context, org string) (*Policy, *Response, error) {
	out := new(Policy)
	resp, err := s.client.call(ctx, http.MethodGet, orgPolicyPath(org), nil, out)
	return out, resp, err
}

// SetPolicy replaces an organization's admission policy floor (owner
// role).
func (s *OrganizationsService) SetPolicy(ctx context.Context, org string, p *PolicyUpdate) (*Policy, *Response, error) {
	out := new(Policy)
	resp, err := s.client.call(ctx, http.MethodPut, orgPolicyPath(org), p, out)
	return out, resp, err
}

// Check runs repo's admission policy on the archive without storing it
// (POST …/charts?dry_run=true).
func (s *ChartsService) Check(ctx context.Context, repo string, archive io.Reader, opts *UploadOptions) (*ChartCheck, *Response, error) {
	out := new(ChartCheck)
	resp, err := s.upload(ctx, repo, archive, opts, true, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// call sends a JSON request and decodes the answer's data into out.
func (c *Client) call(ctx context.Context, method, path string, body, out any) (*Response, error) {
	req, err := c.NewRequest(method, path, body)
	if err != nil {
		return nil, err
	}
	return c.Do(ctx, req, out)
}
