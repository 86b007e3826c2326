package server

import (
	"encoding/json"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// repoListJSON keeps the wire encoding of every repository of the list
// App.Repositories last returned. App hands out the same list (the same
// slice of the same records) until a repository changes or a second has
// passed, so the authenticated repository list, read by every CLI, CI job
// and dashboard, encodes each repository once per list rather than once
// per request; only the envelope is written per request.
type repoListJSON struct {
	mu    sync.Mutex
	repos []*chartctl.Repository
	items [][]byte
}

// encoded returns the JSON of client.Repository for each of repos, in
// order. repos must not be modified (App.Repositories' list is not).
func (e *repoListJSON) encoded(repos []*chartctl.Repository) ([][]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(repos) == len(e.repos) && (len(repos) == 0 || &repos[0] == &e.repos[0]) {
		return e.items, nil
	}
	items := make([][]byte, len(repos))
	for i, r := range repos {
		b, err := json.Marshal(toRepository(r))
		if err != nil {
			return nil, err
		}
		items[i] = b
	}
	e.repos, e.items = repos, items
	return items, nil
}

// writeRepositoryList answers page pg of the repositories of all that the
// caller can see, in the list envelope.
func (s *Server) writeRepositoryList(c echo.Context, all []*chartctl.Repository, pg httpx.Page) error {
	items, err := s.repoJSON.encoded(all)
	if err != nil {
		return err
	}
	p := httpx.PrincipalOf(c)
	visible := make([][]byte, 0, len(all))
	for i, r := range all {
		if p.CanSeeRepo(r) {
			visible = append(visible, items[i])
		}
	}
	page, meta := httpx.Paginate(visible, pg)
	return httpx.ListEncoded(c, page, meta)
}
