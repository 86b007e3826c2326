package client

import (
	"context"
	"io"
	"net/http"
	"net/url"
)

// ChartDiff is the difference between two versions of a chart (GET
// /v1/repositories/:repo/charts/:name/diff).
type ChartDiff struct {
	// Files lists the files that differ, by path relative to the chart's
	// root.
	Files []FileDiff `json:"files"`
	// Values is values.yaml compared by key.
	Values ValuesDiff `json:"values"`
	// ValuesError says why Values is empty when a values.yaml is not
	// valid YAML.
	ValuesError string `json:"values_error,omitempty"`
	// RenderedError says why the manifests each version renders with its
	// default values (files rendered/<template path>) are not in Files:
	// a version cannot be rendered, or the server renders none.
	RenderedError string `json:"rendered_error,omitempty"`
}

// FileDiff is one file that differs between two versions.
type FileDiff struct {
	Path string `json:"path"`
	// Status is "added", "removed" or "modified".
	Status string `json:"status"`
	// Diff is the file's unified diff.
	Diff string `json:"diff"`
}

// ValuesDiff is values.yaml compared by key; keys are dotted paths
// (image.tag, ingress.hosts[0].host, podAnnotations["prometheus.io/scrape"]).
type ValuesDiff struct {
	Added   []string      `json:"added"`
	Removed []string      `json:"removed"`
	Changed []ValueChange `json:"changed"`
}

// ValueChange is a key whose default changed.
type ValueChange struct {
	Key  string `json:"key"`
	From any    `json:"from"`
	To   any    `json:"to"`
}

// DiffOptions tunes Diff.
type DiffOptions struct {
	// ToRepository holds the version to compare with, when it is not in
	// the same repository.
	ToRepository string
}

func diffPath(repo, name, from, to string, opts *DiffOptions) string {
	v := url.Values{}
	v.Set("from", from)
	v.Set("to", to)
	if opts != nil && opts.ToRepository != "" {
		v.Set("to_repo", opts.ToRepository)
	}
	return withQuery(chartsPath(repo, name, "diff"), v)
}

// Diff compares version from of chart name in repo with version to (in
// opts.ToRepository when set). The caller must be able to read both.
func (s *ChartsService) Diff(ctx context.Context, repo, name, from, to string, opts *DiffOptions) (*ChartDiff, *Response, error) {
	req, err := s.client.NewRequest(http.MethodGet, diffPath(repo, name, from, to, opts), nil)
	if err != nil {
		return nil, nil, err
	}
	d := new(ChartDiff)
	resp, err := s.client.Do(ctx, req, d)
	if err != nil {
		return nil, resp, err
	}
	return d, resp, nil
}

// DiffText writes the same comparison as Diff to w as one unified diff
// (Accept: text/plain), ready for patch(1) or a pager.
func (s *ChartsService) DiffText(ctx context.Context, repo, name, from, to string, opts *DiffOptions, w io.Writer) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodGet, diffPath(repo, name, from, to, opts), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain")
	return s.client.Do(ctx, req, w)
}
