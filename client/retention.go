package client

import (
	"context"
	"net/http"
	"net/url"
)

// RetentionPolicy is a repository's retention policy (§15): durations as
// "30d" or "12h", a SemVer constraint, a cron expression; nil or "" is
// unset. PUT replaces the whole policy.
type RetentionPolicy struct {
	KeepLatest             *int    `json:"keep_latest"`
	KeepPushedWithin       *string `json:"keep_pushed_within"`
	KeepDownloadedWithin   *string `json:"keep_downloaded_within"`
	KeepMatching           *string `json:"keep_matching"`
	DeletePrereleasesAfter *string `json:"delete_prereleases_after"`
	Schedule               *string `json:"schedule"`
}

// RetentionDeletion is a version a retention run deleted (or, dry, would
// delete) and why.
type RetentionDeletion struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Reason  string `json:"reason"`
}

// RetentionRun is the answer of a retention run.
type RetentionRun struct {
	Deleted []RetentionDeletion `json:"deleted"`
	DryRun  bool                `json:"dry_run"`
}

func retentionPath(repo string) string {
	return "v1/repositories/" + url.PathEscape(repo) + "/retention"
}

// Retention returns a repository's retention policy.
func (s *RepositoriesService) Retention(ctx context.Context, repo string) (*RetentionPolicy, *Response, error) {
	req, err := s.client.NewRequest(http.MethodGet, retentionPath(repo), nil)
	if err != nil {
		return nil, nil, err
	}
	out := new(RetentionPolicy)
	resp, err := s.client.Do(ctx, req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// SetRetention replaces a repository's retention policy.
func (s *RepositoriesService) SetRetention(ctx context.Context, repo string, p *RetentionPolicy) (*RetentionPolicy, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPut, retentionPath(repo), p)
	if err != nil {
		return nil, nil, err
	}
	out := new(RetentionPolicy)
	resp, err := s.client.Do(ctx, req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// RunRetention applies the policy now; with dryRun it only lists what
// would be deleted.
func (s *RepositoriesService) RunRetention(ctx context.Context, repo string, dryRun bool) (*RetentionRun, *Response, error) {
	path := retentionPath(repo) + "/run"
	if dryRun {
		path += "?dry_run=true"
	}
	req, err := s.client.NewRequest(http.MethodPost, path, nil)
	if err != nil {
		return nil, nil, err
	}
	out := new(RetentionRun)
	resp, err := s.client.Do(ctx, req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}
