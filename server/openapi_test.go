package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/registry"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

var pathParam = regexp.MustCompile(`:([A-Za-z0-9_]+)`)

// documentedOperations returns "METHOD /path" for every operation of the
// OpenAPI document, paths in echo's :param form.
func documentedOperations(t *testing.T) map[string]bool {
	t.Helper()
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(server.OpenAPIDocument(), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi %q, want 3.1.x", doc.OpenAPI)
	}
	brace := regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)
	ops := map[string]bool{}
	for p, item := range doc.Paths {
		for m := range item {
			switch m {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				ops[strings.ToUpper(m)+" "+brace.ReplaceAllString(p, ":$1")] = true
			}
		}
	}
	return ops
}

// TestOpenAPIRouteCoverage walks the route table of a real server with
// everything mounted (the /v1 API, the OAuth server, the dashboard, the OCI
// registry as `chartctl serve` mounts it) and requires the OpenAPI document
// to describe exactly its /v1 routes.
func TestOpenAPIRouteCoverage(t *testing.T) {
	withRegistry := func(s *server.Server) {
		s.Extra = func(e *echo.Echo) {
			blobs := s.Blobs.(*blob.Store)
			reg := registry.New(s.App(), s.Store.(*bolt.DB), blobs, filepath.Join(filepath.Dir(blobs.Root()), "uploads"))
			reg.Auth, reg.Limits = s, s
			reg.Register(e)
			reg.RegisterAdmin(s.API())
		}
	}
	env := oauthtest.Start(t, oauthtest.Config{}, withRegistry)
	e, ok := env.Server.Server.Handler().(*echo.Echo)
	if !ok {
		t.Fatalf("the server's handler is %T, not *echo.Echo", env.Server.Server.Handler())
	}
	routes := map[string]bool{}
	for _, r := range e.Routes() {
		if !strings.HasPrefix(r.Path, "/v1/") || strings.HasSuffix(r.Path, "*") {
			continue // not /v1, or echo's catch-all for unknown routes
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			routes[r.Method+" "+r.Path] = true
		}
	}
	if len(routes) < 20 {
		t.Fatalf("only %d /v1 routes found; the route walk is broken", len(routes))
	}
	docs := documentedOperations(t)
	var missing, extra []string
	for r := range routes {
		if !docs[r] {
			missing = append(missing, r)
		}
	}
	for d := range docs {
		if !routes[d] {
			extra = append(extra, d)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	for _, r := range missing {
		m, p, _ := strings.Cut(r, " ")
		t.Errorf("route %s is served but server/openapi.yaml lacks it: add operation %q under path %q", r, strings.ToLower(m), pathParam.ReplaceAllString(p, "{$1}"))
	}
	for _, d := range extra {
		t.Errorf("server/openapi.yaml documents %s, which the server does not serve: remove it or register the route", d)
	}
}

func TestOpenAPIServedWithoutAuth(t *testing.T) {
	ts := testkit.StartServer(t)
	r := ts.Do(t, http.MethodGet, "/v1/openapi.json", "", nil)
	if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /v1/openapi.json: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}
	if string(r.Body) != string(server.OpenAPIDocument()) {
		t.Error("the served document differs from server.OpenAPIDocument")
	}
}

// The validator the API suite runs under does catch drift: an undocumented
// field, an undocumented status, a request the document forbids.
func TestOpenAPIValidationCatchesDrift(t *testing.T) {
	req := func(method, path, body string) *http.Request {
		u, _ := url.Parse("http://127.0.0.1" + path)
		r := &http.Request{Method: method, URL: u, Header: http.Header{"Authorization": {"Bearer chartctl_x"}}}
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		return r
	}
	jsonHeader := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	good := `{"data":{"id":"u1","email":"a@example.com","admin":false,"scopes":["repo:read"],"created_at":"2026-01-01T00:00:00Z"}}`
	if p := testkit.OpenAPIProblems(req("GET", "/v1/user", ""), nil, 200, jsonHeader, []byte(good)); p != "" {
		t.Fatalf("a conforming answer was refused:\n%s", p)
	}
	for name, c := range map[string]struct {
		req    *http.Request
		body   string
		status int
		resp   string
	}{
		"undocumented field":  {req("GET", "/v1/user", ""), "", 200, strings.Replace(good, `"admin"`, `"secret":"x","admin"`, 1)},
		"undocumented status": {req("GET", "/v1/user", ""), "", 409, `{"error":{"code":"conflict","message":"x"}}`},
		"bad error envelope":  {req("GET", "/v1/user", ""), "", 401, `{"message":"no"}`},
		"accepted bad request": {req("POST", "/v1/repositories", `{"name":"x","colour":"red"}`), `{"name":"x","colour":"red"}`, 200,
			`{"data":{"id":"r","name":"x","description":"","organization":null,"visibility":"private","created_at":"2026-01-01T00:00:00Z"}}`},
		"undocumented route": {req("GET", "/v1/nothing-here", ""), "", 200, `{}`},
	} {
		if p := testkit.OpenAPIProblems(c.req, []byte(c.body), c.status, jsonHeader, []byte(c.resp)); p == "" {
			t.Errorf("%s: not caught", name)
		}
	}
	// An unknown route answered 404 conforms.
	if p := testkit.OpenAPIProblems(req("GET", "/v1/nothing-here", ""), nil, 404, jsonHeader, []byte(`{"error":{"code":"not_found","message":"x"}}`)); p != "" {
		t.Errorf("404 on an unknown route was refused:\n%s", p)
	}
}

func TestCORSOrigins(t *testing.T) {
	ts := testkit.StartServer(t, func(s *server.Server) { s.Config.CORSOrigins = []string{"https://editor.example.com"} })
	preflight := func(origin, path string, method ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodOptions, ts.URL+path, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", append(method, "GET")[0])
		req.Header.Set("Access-Control-Request-Headers", "authorization")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	r := preflight("https://editor.example.com", "/v1/repositories")
	if r.StatusCode != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != "https://editor.example.com" ||
		!strings.Contains(strings.ToLower(r.Header.Get("Access-Control-Allow-Headers")), "authorization") {
		t.Errorf("preflight from the listed origin: %d %v", r.StatusCode, r.Header)
	}
	if r := preflight("https://evil.example.com", "/v1/repositories"); r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("an unlisted origin was allowed: %v", r.Header)
	}
	if r := preflight("https://editor.example.com", "/helm/x/index.yaml"); r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS reached a path outside /v1: %v", r.Header)
	}
	// Every documented operation can be called from the tool: its method
	// is among the preflight's allowed ones (PUT was missing once, found
	// by calling the quota PUT from Swagger UI).
	for op := range documentedOperations(t) {
		method, path, _ := strings.Cut(op, " ")
		path = pathParam.ReplaceAllString(path, "x")
		r := preflight("https://editor.example.com", path, method)
		allowed := strings.Split(r.Header.Get("Access-Control-Allow-Methods"), ",")
		if r.StatusCode != http.StatusNoContent || !slices.Contains(allowed, method) {
			t.Errorf("preflight of %s: %d, allowed methods %q", op, r.StatusCode, allowed)
		}
	}
	// The tool's own OAuth sign-in (authorization code with PKCE) ends in
	// a token request from the browser.
	for _, p := range []string{"/oauth/token", "/oauth/revoke"} {
		if r := preflight("https://editor.example.com", p, "POST"); r.Header.Get("Access-Control-Allow-Origin") != "https://editor.example.com" {
			t.Errorf("preflight of POST %s from the listed origin: %d %v", p, r.StatusCode, r.Header)
		}
	}
	// A real call from the tool, with a key: the answer is readable.
	got := ts.Do(t, http.MethodGet, "/v1/user", ts.AdminKey, nil, "Origin", "https://editor.example.com")
	if got.StatusCode != 200 || got.Header.Get("Access-Control-Allow-Origin") != "https://editor.example.com" ||
		!strings.Contains(got.Header.Get("Access-Control-Expose-Headers"), "X-Request-Id") {
		t.Errorf("GET /v1/user from the listed origin: %d %v", got.StatusCode, got.Header)
	}

	// Without --cors-origins nothing is allowed.
	plain := testkit.StartServer(t)
	got = plain.Do(t, http.MethodGet, "/v1/user", plain.AdminKey, nil, "Origin", "https://editor.example.com")
	if got.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS on by default: %v", got.Header)
	}
}

// TestOpenAPIDocumentHasNoNullKeys catches YAML that parses into something
// else than was written: an unquoted comma in a flow mapping's description
// cuts the text and turns its rest into a key with a null value, which
// OpenAPI tools show without complaint (three such were found by reading
// the document in Swagger UI).
func TestOpenAPIDocumentHasNoNullKeys(t *testing.T) {
	var doc any
	if err := json.Unmarshal(server.OpenAPIDocument(), &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if e == nil && k != "default" && k != "example" && k != "const" {
					t.Errorf("%s: key %q has no value (an unquoted comma or colon in a flow mapping?)", path, k)
				}
				walk(path+"/"+k, e)
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s/%d", path, i), e)
			}
		}
	}
	walk("#", doc)
}
