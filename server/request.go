package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// maxJSONBody bounds every JSON request body (§2: 413 above 1 MiB).
const maxJSONBody = 1 << 20

// bindJSON decodes the request body into v strictly: a JSON media type,
// at most 1 MiB, no unknown fields, one value.
func bindJSON(c echo.Context, v any) error {
	req := c.Request()
	mt, _, err := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return chartctl.Errorf(chartctl.EMEDIATYPE, "Send the request body as JSON with Content-Type: application/json.")
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, maxJSONBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return chartctl.Errorf(chartctl.ETOOLARGE, "The JSON body is larger than 1 MiB.")
		}
		return chartctl.Invalid("body", "Could not read the request body.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return chartctl.Invalid("body", "The request body must hold one JSON object.")
	}
	return nil
}

func jsonError(err error) error {
	// Time.UnmarshalJSON's errors carry no field name; expires_at is the
	// only time a request body holds.
	var pe *time.ParseError
	if errors.As(err, &pe) || strings.HasPrefix(err.Error(), "Time.UnmarshalJSON") {
		return chartctl.Invalid("expires_at", "expires_at must be an RFC 3339 time, such as 2027-01-31T00:00:00Z.")
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return chartctl.Invalid(te.Field, "Invalid %s: expected %s.", te.Field, te.Type.String())
	}
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		field := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
		return chartctl.Invalid(field, "Unknown field %q in the request body.", field)
	}
	return chartctl.Invalid("body", "The request body is not valid JSON.")
}

// page is a parsed page/limit pair (§3).
type page struct{ Page, Limit int }

// parsePage reads page (≥ 1, default 1) and limit (1..100, default 20).
func parsePage(c echo.Context) (page, error) {
	p := page{Page: 1, Limit: 20}
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

// offset is the number of items before the page. A page so far past the
// end that the product overflows is clamped: it is still past the end.
func (p page) offset() int {
	if p.Page-1 > math.MaxInt/p.Limit {
		return math.MaxInt
	}
	return (p.Page - 1) * p.Limit
}

// paginate returns the page of items and the list metadata.
func paginate[T any](items []T, p page) ([]T, client.Meta) {
	meta := client.Meta{Total: len(items), Page: p.Page, Limit: p.Limit}
	start := p.offset()
	if start >= len(items) {
		return []T{}, meta
	}
	end := min(start+p.Limit, len(items))
	return items[start:end], meta
}

// listPage answers one page of items with its metadata, converting only
// that page to the wire type.
func listPage[T, W any](c echo.Context, items []T, pg page, conv func(T) W) error {
	pageItems, meta := paginate(items, pg)
	return list(c, mapSlice(pageItems, conv), meta)
}

// filter returns the items keep accepts, in order.
func filter[T any](items []T, keep func(T) bool) []T {
	out := make([]T, 0, len(items))
	for _, v := range items {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// BindJSON decodes a JSON request body with the rules of every /v1
// endpoint (see bindJSON), for endpoints other packages add to API().
func BindJSON(c echo.Context, v any) error { return bindJSON(c, v) }

// WriteData writes v in the success envelope {"data": v}.
func WriteData(c echo.Context, v any) error { return data(c, v) }

// data writes a success envelope.
func data(c echo.Context, v any) error {
	return writeJSON(c, http.StatusOK, struct {
		Data any `json:"data"`
	}{v})
}

// list writes a success envelope with pagination metadata.
func list(c echo.Context, v any, meta client.Meta) error {
	return writeJSON(c, http.StatusOK, struct {
		Data any         `json:"data"`
		Meta client.Meta `json:"meta"`
	}{v, meta})
}

// jsonContentType is the media type of every JSON response (§1).
const jsonContentType = "application/json; charset=utf-8"

// writeJSON writes v as the JSON response body with status.
func writeJSON(c echo.Context, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.Blob(status, jsonContentType, append(b, '\n'))
}
