package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"time"
)

// Replication keeps a target registry in step with a source repository
// (CONTRACT §18 "Federation"). The password is never shown.
type Replication struct {
	Name      string             `json:"name"`
	Source    string             `json:"source"`
	Target    string             `json:"target"`
	Username  *string            `json:"username,omitempty"`
	Filter    *ReplicationFilter `json:"filter,omitempty"`
	On        []string           `json:"on"`
	CreatedAt time.Time          `json:"created_at"`
}

// ReplicationFilter narrows what a replication copies: a glob over chart
// names and a SemVer range over versions.
type ReplicationFilter struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

// ReplicationRequest is the body of POST /v1/replications.
type ReplicationRequest struct {
	Name     string             `json:"name"`
	Source   string             `json:"source"`
	Target   string             `json:"target"`
	Username string             `json:"username,omitempty"`
	Password string             `json:"password,omitempty"`
	Filter   *ReplicationFilter `json:"filter,omitempty"`
	On       []string           `json:"on,omitempty"`
}

// ReplicationStatus is how a replication stands: tasks waiting or being
// retried, tasks given up, its last success and last error.
type ReplicationStatus struct {
	Pending       int        `json:"pending"`
	Failed        int        `json:"failed"`
	LastSuccessAt *time.Time `json:"last_success_at"`
	LastError     *string    `json:"last_error,omitempty"`
}

// ReplicationRun is the answer of POST /v1/replications/:name/run: how
// many versions were queued.
type ReplicationRun struct {
	Name   string `json:"name"`
	Queued int    `json:"queued"`
}

// ReplicationsService manages replications.
type ReplicationsService service

// List returns every replication of the repositories the caller
// administers, walking the pages; the Response is the last page's.
func (s *ReplicationsService) List(ctx context.Context) ([]*Replication, *Response, error) {
	return listAll(ctx, s.page)
}

// All iterates over the replications of the repositories the caller
// administers, a page at a time.
func (s *ReplicationsService) All(ctx context.Context) iter.Seq2[*Replication, error] {
	return paginate(ctx, ListOptions{}, s.page)
}

// page returns one page of GET /v1/replications.
func (s *ReplicationsService) page(ctx context.Context, opts *ListOptions) ([]*Replication, *Response, error) {
	return getPage[Replication](ctx, s.client, "v1/replications", opts)
}

// Create creates a replication.
func (s *ReplicationsService) Create(ctx context.Context, r *ReplicationRequest) (*Replication, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, "v1/replications", r)
	if err != nil {
		return nil, nil, err
	}
	out := new(Replication)
	resp, err := s.client.Do(ctx, req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// Get returns one replication.
func (s *ReplicationsService) Get(ctx context.Context, name string) (*Replication, *Response, error) {
	req, err := s.client.NewRequest(http.MethodGet, "v1/replications/"+url.PathEscape(name), nil)
	if err != nil {
		return nil, nil, err
	}
	out := new(Replication)
	resp, err := s.client.Do(ctx, req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// Delete deletes a replication and what it had still to do.
func (s *ReplicationsService) Delete(ctx context.Context, name string) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodDelete, "v1/replications/"+url.PathEscape(name), nil)
	if err != nil {
		return nil, err
	}
	return s.client.Do(ctx, req, nil)
}

// Run queues a copy of every version the source holds now.
func (s *ReplicationsService) Run(ctx context.Context, name string) (*ReplicationRun, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, "v1/replications/"+url.PathEscape(name)+"/run", nil)
	if err != nil {
		return nil, nil, err
	}
	out := new(ReplicationRun)
	resp, err := s.client.Do(ctx, req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// Status returns how the replication stands.
func (s *ReplicationsService) Status(ctx context.Context, name string) (*ReplicationStatus, *Response, error) {
	req, err := s.client.NewRequest(http.MethodGet, "v1/replications/"+url.PathEscape(name)+"/status", nil)
	if err != nil {
		return nil, nil, err
	}
	out := new(ReplicationStatus)
	resp, err := s.client.Do(ctx, req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}
