package httpx

import (
	"math"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// Page is a parsed page/limit pair (§3).
type Page struct{ Page, Limit int }

// ParsePage reads page (≥ 1, default 1) and limit (1..100, default 20).
// A bad value is EINVALID naming it.
func ParsePage(c echo.Context) (Page, error) {
	p := Page{Page: 1, Limit: 20}
	if c.Request().URL.RawQuery == "" {
		// Nothing to parse: spares echo building the query's map.
		return p, nil
	}
	if v := c.QueryParam("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return p, chartctl.Invalid("page", "page must be an integer of at least 1.")
		}
		p.Page = n
	}
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return p, chartctl.Invalid("limit", "limit must be an integer from 1 to 100.")
		}
		p.Limit = n
	}
	return p, nil
}

// Offset is the number of items before the page. A page so far past the
// end that the product overflows is clamped: it is still past the end.
func (p Page) Offset() int {
	if p.Page-1 > math.MaxInt/p.Limit {
		return math.MaxInt
	}
	return (p.Page - 1) * p.Limit
}

// Paginate returns the page of items and the list metadata.
func Paginate[T any](items []T, p Page) ([]T, client.Meta) {
	meta := client.Meta{Total: len(items), Page: p.Page, Limit: p.Limit}
	start := p.Offset()
	if start >= len(items) {
		return []T{}, meta
	}
	end := min(start+p.Limit, len(items))
	return items[start:end], meta
}

// ListPage answers one page of items with its metadata, converting only
// that page to the wire type.
func ListPage[T, W any](c echo.Context, items []T, pg Page, conv func(T) W) error {
	pageItems, meta := Paginate(items, pg)
	return List(c, MapSlice(pageItems, conv), meta)
}

// Filter returns the items keep accepts, in order.
func Filter[T any](items []T, keep func(T) bool) []T {
	out := make([]T, 0, len(items))
	for _, v := range items {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// MapSlice converts every item with f; the result is never nil, so an
// empty list encodes as [].
func MapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
