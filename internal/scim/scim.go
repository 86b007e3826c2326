// Package scim serves SCIM 2.0 (RFC 7643, RFC 7644) under /scim/v2: the
// way an identity provider (Okta, Entra ID, …) provisions chartctl's
// users, deactivates them at once, and pushes the groups that bound teams
// take their members from. It parses tolerantly, as those providers send
// (extension schemas, "Replace", "False", path filters such as
// members[value eq "…"]; CONTRACT §18 decision 14), and answers RFC 7644
// §3.12 errors. What a request does to users and teams is internal/app's
// decision; this package only speaks the protocol.
package scim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// Schema URNs (RFC 7643 §8.7, RFC 7644 §3.12, §3.4.2, §3.5.2).
const (
	SchemaUser        = "urn:ietf:params:scim:schemas:core:2.0:User"
	SchemaGroup       = "urn:ietf:params:scim:schemas:core:2.0:Group"
	SchemaError       = "urn:ietf:params:scim:api:messages:2.0:Error"
	SchemaList        = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
	SchemaPatch       = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
	SchemaSPConfig    = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
	SchemaResourceTyp = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
)

// maxBody bounds a request body, as the /v1 API's JSON bodies are.
const maxBody = 1 << 20

// Handler serves /scim/v2.
type Handler struct {
	// App is the application layer every change goes through.
	App *app.App
	// BaseURL, if set, makes meta.location absolute.
	BaseURL string
	// Invalidate drops the server's cached credentials after a user was
	// deactivated or deleted, so their keys stop working at once.
	Invalidate func()
	Logger     *slog.Logger
}

// Register adds the routes to e.
func (h *Handler) Register(e *echo.Echo) {
	g := e.Group("/scim/v2", h.authenticate)
	g.GET("/ServiceProviderConfig", h.serviceProviderConfig)
	g.GET("/ResourceTypes", h.resourceTypes)
	g.GET("/Users", h.listUsers)
	g.POST("/Users", h.createUser)
	g.GET("/Users/:id", h.getUser)
	g.PUT("/Users/:id", h.replaceUser)
	g.PATCH("/Users/:id", h.patchUser)
	g.DELETE("/Users/:id", h.deleteUser)
	g.GET("/Groups", h.listGroups)
	g.POST("/Groups", h.createGroup)
	g.GET("/Groups/:id", h.getGroup)
	g.PUT("/Groups/:id", h.replaceGroup)
	g.PATCH("/Groups/:id", h.patchGroup)
	g.DELETE("/Groups/:id", h.deleteGroup)
}

// Error is an RFC 7644 §3.12 error.
type Error struct {
	Status   int
	SCIMType string
	Detail   string
}

func (e *Error) Error() string { return e.Detail }

func errorf(status int, scimType, format string, args ...any) *Error {
	return &Error{Status: status, SCIMType: scimType, Detail: fmt.Sprintf(format, args...)}
}

// writeJSON answers v as application/scim+json.
func writeJSON(c echo.Context, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.Blob(status, "application/scim+json; charset=utf-8", b)
}

// fail answers err as an RFC 7644 error body; domain errors map by code,
// anything else is a 500 that quotes the request id.
func (h *Handler) fail(c echo.Context, err error) error {
	var se *Error
	if !errors.As(err, &se) {
		msg := chartctl.ErrorMessage(err)
		switch chartctl.ErrorCode(err) {
		case chartctl.EINVALID:
			se = errorf(http.StatusBadRequest, "invalidValue", "%s", msg)
		case chartctl.ENOTFOUND:
			se = errorf(http.StatusNotFound, "", "%s", msg)
		case chartctl.ECONFLICT:
			se = errorf(http.StatusConflict, "uniqueness", "%s", msg)
		case chartctl.EUNAUTHORIZED:
			se = errorf(http.StatusUnauthorized, "", "%s", msg)
		case chartctl.EFORBIDDEN:
			se = errorf(http.StatusForbidden, "", "%s", msg)
		default:
			rid := c.Response().Header().Get(echo.HeaderXRequestID)
			h.Logger.Error("scim request failed", "request_id", rid, "err", err)
			se = errorf(http.StatusInternalServerError, "", "Internal error (request %s); the server log has the details.", rid)
		}
	}
	body := map[string]any{"schemas": []string{SchemaError}, "status": strconv.Itoa(se.Status), "detail": se.Detail}
	if se.SCIMType != "" {
		body["scimType"] = se.SCIMType
	}
	if se.Status == http.StatusUnauthorized {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="chartctl-scim"`)
	}
	return writeJSON(c, se.Status, body)
}

// authenticate checks the bearer token and puts the SCIM client in the
// request's audit actor (credential kind scim, decision 21).
func (h *Handler) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		auth := c.Request().Header.Get("Authorization")
		scheme, value, ok := strings.Cut(auth, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return h.fail(c, errorf(http.StatusUnauthorized, "", "A SCIM bearer token is required: create one with `chartctl admin scim-token create`."))
		}
		ctx := c.Request().Context()
		tok, err := h.App.AuthenticateSCIM(ctx, strings.TrimSpace(value))
		if err != nil {
			return h.fail(c, err)
		}
		act := chartctl.ActorFrom(ctx)
		act.CredentialID, act.CredentialKind = tok.ID, chartctl.CredentialSCIM
		act.Email = "scim:" + tok.Name
		c.SetRequest(c.Request().WithContext(chartctl.WithActor(ctx, &act)))
		if err := next(c); err != nil {
			return h.fail(c, err)
		}
		return nil
	}
}

// readBody decodes the JSON body into v.
func readBody(c echo.Context, v any) error {
	b, err := io.ReadAll(io.LimitReader(c.Request().Body, maxBody+1))
	if err != nil {
		return errorf(http.StatusBadRequest, "invalidSyntax", "The request body could not be read.")
	}
	if len(b) > maxBody {
		return errorf(http.StatusRequestEntityTooLarge, "", "The request body is over 1 MiB.")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errorf(http.StatusBadRequest, "invalidSyntax", "The request body is not valid JSON: %s.", jsonProblem(err))
	}
	return nil
}

func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s has the wrong type", te.Field)
	}
	return "malformed"
}

// boolValue reads a SCIM boolean as providers send it: true, "True",
// "false", "False".
func boolValue(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		if b, err := strconv.ParseBool(strings.ToLower(strings.TrimSpace(x))); err == nil {
			return b, nil
		}
	}
	return false, errorf(http.StatusBadRequest, "invalidValue", "active must be true or false (got %v).", v)
}

// filter is an RFC 7644 §3.4.2.2 filter of the one form providers send
// for lookups: ATTRIBUTE eq "VALUE".
type filter struct{ attr, value string }

func parseFilter(s string) (*filter, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	parts := strings.SplitN(s, " ", 3)
	if len(parts) != 3 || !strings.EqualFold(parts[1], "eq") {
		return nil, errorf(http.StatusBadRequest, "invalidFilter", "Unsupported filter %q: use ATTRIBUTE eq \"VALUE\".", s)
	}
	v, err := strconv.Unquote(strings.TrimSpace(parts[2]))
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "invalidFilter", "Unsupported filter %q: quote the value.", s)
	}
	return &filter{attr: strings.ToLower(parts[0]), value: v}, nil
}

// page reads startIndex (1-based) and count; RFC 7644 §3.4.2.4 says
// values below 1 are read as 1 and a negative count as 0.
func page(c echo.Context) (start, count int, err error) {
	start, count = 1, 100
	if s := c.QueryParam("startIndex"); s != "" {
		if start, err = strconv.Atoi(s); err != nil {
			return 0, 0, errorf(http.StatusBadRequest, "invalidValue", "startIndex must be an integer.")
		}
		start = max(start, 1)
	}
	if s := c.QueryParam("count"); s != "" {
		if count, err = strconv.Atoi(s); err != nil {
			return 0, 0, errorf(http.StatusBadRequest, "invalidValue", "count must be an integer.")
		}
		count = min(max(count, 0), 100)
	}
	return start, count, nil
}

// list answers a ListResponse of the page [start, start+count) of items.
func list[T any](c echo.Context, items []T, start, count int, render func(T) any) error {
	res := []any{}
	for i := start - 1; i < len(items) && len(res) < count; i++ {
		res = append(res, render(items[i]))
	}
	return writeJSON(c, http.StatusOK, map[string]any{"schemas": []string{SchemaList}, "totalResults": len(items),
		"startIndex": start, "itemsPerPage": len(res), "Resources": res})
}

func (h *Handler) location(kind, id string) string {
	return strings.TrimRight(h.BaseURL, "/") + "/scim/v2/" + kind + "/" + id
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (h *Handler) serviceProviderConfig(c echo.Context) error {
	return writeJSON(c, http.StatusOK, map[string]any{
		"schemas":          []string{SchemaSPConfig},
		"documentationUri": "https://github.com/chartctl/chartctl/blob/main/docs/sso.md#scim",
		"patch":            map[string]bool{"supported": true},
		"bulk":             map[string]any{"supported": false, "maxOperations": 0, "maxPayloadSize": 0},
		"filter":           map[string]any{"supported": true, "maxResults": 100},
		"changePassword":   map[string]bool{"supported": false},
		"sort":             map[string]bool{"supported": false},
		"etag":             map[string]bool{"supported": false},
		"authenticationSchemes": []map[string]any{{"type": "oauthbearertoken", "name": "OAuth Bearer Token",
			"description": "A token from `chartctl admin scim-token create`.", "primary": true}},
	})
}

func (h *Handler) resourceTypes(c echo.Context) error {
	types := []any{
		map[string]any{"schemas": []string{SchemaResourceTyp}, "id": "User", "name": "User", "endpoint": "/Users", "schema": SchemaUser},
		map[string]any{"schemas": []string{SchemaResourceTyp}, "id": "Group", "name": "Group", "endpoint": "/Groups", "schema": SchemaGroup},
	}
	return writeJSON(c, http.StatusOK, map[string]any{"schemas": []string{SchemaList}, "totalResults": len(types),
		"startIndex": 1, "itemsPerPage": len(types), "Resources": types})
}

// ctxOf is the request's context.
func ctxOf(c echo.Context) context.Context { return c.Request().Context() }

func (h *Handler) invalidate() {
	if h.Invalidate != nil {
		h.Invalidate()
	}
}
