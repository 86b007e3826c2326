package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
)

// TrustService manages the trust material of repositories and
// organizations (CONTRACT §18 "Trust and admission"): the keys and
// identities signatures of their chart versions are verified against.
type TrustService service

// TrustScope names where trust material lives: exactly one of Repository
// and Organization.
type TrustScope struct {
	Repository   string
	Organization string
}

// path is the scope's trust path, or of entry name when not empty.
func (s TrustScope) path(name string) string {
	p := "v1/repositories/" + url.PathEscape(s.Repository) + "/trust"
	if s.Organization != "" {
		p = "v1/organizations/" + url.PathEscape(s.Organization) + "/trust"
	}
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p
}

// List returns every trust entry of the scope, by name, walking the pages;
// the Response is the last page's. It calls GET
// /v1/repositories/:repo/trust or /v1/organizations/:org/trust.
func (s *TrustService) List(ctx context.Context, scope TrustScope) ([]*TrustEntry, *Response, error) {
	return listAll(ctx, s.pager(scope))
}

// All iterates over the trust entries of the scope, by name, a page at a
// time.
func (s *TrustService) All(ctx context.Context, scope TrustScope) iter.Seq2[*TrustEntry, error] {
	return paginate(ctx, ListOptions{}, s.pager(scope))
}

// pager returns the function that fetches one page of scope's entries.
func (s *TrustService) pager(scope TrustScope) func(context.Context, *ListOptions) ([]*TrustEntry, *Response, error) {
	return func(ctx context.Context, opts *ListOptions) ([]*TrustEntry, *Response, error) {
		return getPage[TrustEntry](ctx, s.client, scope.path(""), opts)
	}
}

// Add adds a trust entry to the scope. It calls POST …/trust.
func (s *TrustService) Add(ctx context.Context, scope TrustScope, r *TrustRequest) (*TrustEntry, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, scope.path(""), r)
	if err != nil {
		return nil, nil, err
	}
	var e TrustEntry
	resp, err := s.client.Do(ctx, req, &e)
	if err != nil {
		return nil, resp, err
	}
	return &e, resp, nil
}

// Remove removes trust entry name from the scope. It calls DELETE
// …/trust/:name.
func (s *TrustService) Remove(ctx context.Context, scope TrustScope, name string) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodDelete, scope.path(name), nil)
	if err != nil {
		return nil, err
	}
	return s.client.Do(ctx, req, nil)
}
