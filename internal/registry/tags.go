package registry

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"
)

// handleTags answers GET /v2/<name>/tags/list: the name's tags in lexical
// order (a chart's versions among them, '+' written '_'), paginated with n
// and last, with a Link header to the next page, as the distribution spec
// says. Both sources (tags pushed over OCI, and the tags of the chart's
// versions) are read a page at a time after last and merged, so a page
// costs the same whatever the number of tags.
func (r *Registry) handleTags(c echo.Context, m pathMatch) error {
	w, req := c.Response(), c.Request()
	name := m[1]
	if _, _, err := r.authorize(c, name, actionPull); err != nil {
		return err
	}
	n, last, err := pageParams(req)
	if err != nil {
		return err
	}
	ctx := req.Context()
	stored, storedMore, err := r.OCI.Tags(ctx, name, last, n)
	if err != nil {
		return err
	}
	derived, derivedMore, err := r.chartTags(ctx, name, last, n)
	if err != nil {
		return err
	}
	tags := mergeSorted(stored, derived)
	more := storedMore || derivedMore
	if n >= 0 && len(tags) > n {
		tags, more = tags[:n], true
	}
	if more && len(tags) > 0 {
		w.Header().Set("Link", `</v2/`+name+`/tags/list?n=`+strconv.Itoa(n)+`&last=`+url.QueryEscape(tags[len(tags)-1])+`>; rel="next"`)
	}
	return writeJSON(w, req, http.StatusOK, "application/json", struct {
		Name string   `json:"name"`
		Tags []string `json:"tags"`
	}{name, tags})
}

// mergeSorted merges two sorted lists of strings into one sorted list
// without duplicates (a chart version pushed over OCI is in both).
func mergeSorted(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		var next string
		switch {
		case len(b) == 0 || len(a) > 0 && a[0] < b[0]:
			next, a = a[0], a[1:]
		case len(a) == 0 || b[0] < a[0]:
			next, b = b[0], b[1:]
		default:
			next, a, b = a[0], a[1:], b[1:]
		}
		out = append(out, next)
	}
	return out
}
