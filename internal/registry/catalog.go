package registry

import (
	"github.com/labstack/echo/v4"
	"net/http"
	"net/url"
	"sort"
	"strconv"
)

// handleCatalog answers GET /v2/_catalog: the names holding content that
// the caller may pull, in lexical order, paginated with n and last (and a
// Link header to the next page) as the tags list is. An anonymous caller
// is challenged, as Distribution and zot do (the catalog needs the
// registry:catalog:* scope there), so that clients sign in and then see
// what their credential may pull, not only the public repositories.
func (r *Registry) handleCatalog(c echo.Context, _ pathMatch) error {
	w, req := c.Response(), c.Request()
	p, err := r.principal(c)
	if err != nil {
		return err
	}
	if p == nil {
		w.Header().Set("WWW-Authenticate", r.challenge(req, "registry:catalog:*"))
		return newError(http.StatusUnauthorized, CodeUnauthorized, "Authentication required to list repositories: sign in (docker login, helm registry login or oras login) and list again.")
	}
	n, last, err := pageParams(req)
	if err != nil {
		return err
	}
	all, err := r.OCI.Names(req.Context())
	if err != nil {
		return err
	}
	names, err := r.chartNames(req.Context())
	if err != nil {
		return err
	}
	all = append(all, names...)
	sort.Strings(all)
	visible := map[string]bool{}
	out := []string{}
	more := false
	for i, name := range all {
		if name <= last || (i > 0 && all[i-1] == name) {
			continue
		}
		repo := repoOf(name)
		ok, seen := visible[repo]
		if !seen {
			ok = r.canPull(req.Context(), p, name)
			visible[repo] = ok
		}
		if !ok {
			continue
		}
		if n >= 0 && len(out) == n {
			more = true
			break
		}
		out = append(out, name)
	}
	if more {
		w.Header().Set("Link", `</v2/_catalog?n=`+strconv.Itoa(n)+`&last=`+url.QueryEscape(out[len(out)-1])+`>; rel="next"`)
	}
	return writeJSON(w, req, http.StatusOK, "application/json", map[string][]string{"repositories": out})
}

// pageParams parses the n and last query parameters (n = -1 when absent).
func pageParams(req *http.Request) (n int, last string, err error) {
	q := req.URL.Query()
	n = -1
	if s := q.Get("n"); s != "" {
		v, perr := strconv.Atoi(s)
		if perr != nil || v < 0 {
			return 0, "", newError(http.StatusBadRequest, CodeUnsupported, "n must be a non-negative integer.")
		}
		n = v
	}
	return n, q.Get("last"), nil
}
