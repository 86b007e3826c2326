package registry

import (
	"github.com/labstack/echo/v4"
	"net/http"
	"net/url"
	"sort"
	"strconv"
)

// handleTags answers GET /v2/<name>/tags/list: the name's tags in lexical
// order (a chart's versions among them, '+' written '_'), paginated with n
// and last, with a Link header to the next page.
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
	stored, _, err := r.OCI.Tags(ctx, name, "", -1)
	if err != nil {
		return err
	}
	derived, err := r.chartTags(ctx, name)
	if err != nil {
		return err
	}
	all := append(stored, derived...)
	sort.Strings(all)
	tags := []string{}
	more := false
	for i, t := range all {
		if t <= last && last != "" || (i > 0 && all[i-1] == t) {
			continue
		}
		if n >= 0 && len(tags) == n {
			more = true
			break
		}
		tags = append(tags, t)
	}
	if more && len(tags) > 0 {
		w.Header().Set("Link", `</v2/`+name+`/tags/list?n=`+strconv.Itoa(n)+`&last=`+url.QueryEscape(tags[len(tags)-1])+`>; rel="next"`)
	}
	return writeJSON(w, req, http.StatusOK, "application/json", struct {
		Name string   `json:"name"`
		Tags []string `json:"tags"`
	}{name, tags})
}
