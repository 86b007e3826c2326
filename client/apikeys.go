package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
)

// APIKeysService manages the caller's own API keys (/v1/user/api-keys).
type APIKeysService service

// List returns one page of the caller's API keys (without their values).
func (s *APIKeysService) List(ctx context.Context, opts *ListOptions) ([]*APIKey, *Response, error) {
	return getPage[APIKey](ctx, s.client, "v1/user/api-keys", opts)
}

// All iterates over every API key of the caller.
func (s *APIKeysService) All(ctx context.Context) iter.Seq2[*APIKey, error] {
	return paginate(ctx, ListOptions{}, s.List)
}

// Create creates an API key; its scopes never exceed the caller's, and
// r.Repositories (patterns such as "acme-*"), when set, limits it to the
// repositories they match on top of its scopes. The returned key's Key
// field holds the value, shown this once. It calls POST /v1/user/api-keys.
func (s *APIKeysService) Create(ctx context.Context, r *CreateAPIKeyRequest) (*APIKey, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, "v1/user/api-keys", r)
	if err != nil {
		return nil, nil, err
	}
	key := new(APIKey)
	resp, err := s.client.Do(ctx, req, key)
	if err != nil {
		return nil, resp, err
	}
	return key, resp, nil
}

// Revoke revokes the caller's API key with the given id.
func (s *APIKeysService) Revoke(ctx context.Context, id string) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodDelete, "v1/user/api-keys/"+url.PathEscape(id), nil)
	if err != nil {
		return nil, err
	}
	return s.client.Do(ctx, req, nil)
}
