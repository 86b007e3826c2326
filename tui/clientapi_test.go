package tui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chartctl/chartctl/client"
)

// wireServer answers the /v1 endpoints the browser uses in the contract's
// wire format, recording each request's path and query.
type wireServer struct {
	mu       sync.Mutex
	requests []string
}

func (ws *wireServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws.mu.Lock()
	ws.requests = append(ws.requests, r.URL.Path+"?"+r.URL.RawQuery)
	remaining := 1000 - len(ws.requests)
	ws.mu.Unlock()

	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-RateLimit-Limit", "1000")
	h.Set("X-RateLimit-Remaining", itoa(remaining))
	h.Set("X-RateLimit-Used", itoa(1000-remaining))
	h.Set("X-RateLimit-Reset", "1800000000")
	h.Set("X-RateLimit-Resource", "global")

	list := func(data any, total int) {
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data, "meta": client.Meta{Total: total, Page: 2, Limit: 1}})
	}
	nginx := client.Chart{Name: "nginx", Version: "1.2.0", AppVersion: "1.25.3", Digest: digestOf("nginx1.2.0"), Size: 5096, CreatedAt: fixedTime}
	switch r.URL.Path {
	case "/v1/repositories":
		list([]client.Repository{{ID: "repo_1", Name: "apps", Visibility: "public"}}, 3)
	case "/v1/repositories/apps/charts", "/v1/repositories/apps/charts/nginx":
		list([]client.Chart{nginx}, 3)
	case "/v1/repositories/apps/charts/nginx/1.2.0":
		_ = json.NewEncoder(w).Encode(map[string]any{"data": nginx})
	case "/v1/search":
		if r.URL.Query().Get("q") == "limited" {
			h.Set("X-RateLimit-Remaining", "0")
			h.Set("Retry-After", "120")
			w.WriteHeader(http.StatusTooManyRequests)
			_ = json.NewEncoder(w).Encode(client.ErrorBody{Error: client.ErrorDetail{Code: client.CodeRateLimitExceeded, Message: "rate limit exceeded", RetryAfter: 120}})
			return
		}
		list([]client.SearchResult{{Repository: "apps", Name: "nginx", Version: "1.2.0"}}, 3)
	case "/v1/teams":
		list([]client.Team{{ID: "team_1", Name: "platform", Organization: "acme"}}, 3)
	case "/v1/teams/platform/members":
		list([]client.Member{{ID: "mem_1", Email: "alice@acme.test", Role: "owner"}}, 3)
	default:
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(client.ErrorBody{Error: client.ErrorDetail{Code: client.CodeNotFound, Message: "repository not found"}})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestClientAPIOverHTTP(t *testing.T) {
	ws := &wireServer{}
	srv := httptest.NewServer(ws)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, client.WithMaxRetries(0), client.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	api := NewClientAPI(c)
	ctx := context.Background()

	if _, _, ok := api.RateLimit(); ok {
		t.Error("rate limit known before any request")
	}
	repos, meta, err := api.ListRepositories(ctx, 2, 1)
	if err != nil || len(repos) != 1 || repos[0].Name != "apps" || meta != (client.Meta{Total: 3, Page: 2, Limit: 1}) {
		t.Fatalf("ListRepositories = %v, %+v, %v", repos, meta, err)
	}
	if remaining, limit, ok := api.RateLimit(); !ok || limit != 1000 || remaining != 999 {
		t.Errorf("RateLimit() = %d, %d, %v; want 999 of 1000", remaining, limit, ok)
	}
	if charts, _, err := api.ListCharts(ctx, "apps", 2, 1); err != nil || len(charts) != 1 {
		t.Errorf("ListCharts = %v, %v", charts, err)
	}
	if versions, _, err := api.ChartVersions(ctx, "apps", "nginx", 2, 1); err != nil || len(versions) != 1 {
		t.Errorf("ChartVersions = %v, %v", versions, err)
	}
	if v, err := api.ChartVersion(ctx, "apps", "nginx", "1.2.0"); err != nil || v.Size != 5096 {
		t.Errorf("ChartVersion = %+v, %v", v, err)
	}
	if res, _, err := api.SearchCharts(ctx, "ng", 2, 1); err != nil || len(res) != 1 {
		t.Errorf("SearchCharts = %v, %v", res, err)
	}
	if teams, _, err := api.ListTeams(ctx, 2, 1); err != nil || len(teams) != 1 {
		t.Errorf("ListTeams = %v, %v", teams, err)
	}
	if members, _, err := api.ListMembers(ctx, "platform", 2, 1); err != nil || len(members) != 1 || members[0].Email != "alice@acme.test" {
		t.Errorf("ListMembers = %v, %v", members, err)
	}

	_, _, err = api.SearchCharts(ctx, "limited", 1, 50)
	if got := describeError(err, "", fixedTime); got != "rate limited until 10:32:00, then r retries" {
		t.Errorf("429 shows %q (from %v)", got, err)
	}
	if remaining, _, _ := api.RateLimit(); remaining != 0 {
		t.Errorf("remaining after a 429 = %d, want 0", remaining)
	}
	_, _, err = api.ListCharts(ctx, "nope", 1, 50)
	if got := describeError(err, "", fixedTime); got != "not found: repository not found" {
		t.Errorf("404 shows %q", got)
	}

	want := []string{
		"/v1/repositories?limit=1&page=2",
		"/v1/repositories/apps/charts?limit=1&page=2",
		"/v1/repositories/apps/charts/nginx?limit=1&page=2",
		"/v1/repositories/apps/charts/nginx/1.2.0?",
		"/v1/search?limit=1&page=2&q=ng",
		"/v1/teams?limit=1&page=2",
		"/v1/teams/platform/members?limit=1&page=2",
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for i, w := range want {
		if i >= len(ws.requests) || !sameQuery(ws.requests[i], w) {
			t.Errorf("request %d = %q, want %q", i, at(ws.requests, i), w)
		}
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

// sameQuery compares path?query strings regardless of parameter order.
func sameQuery(a, b string) bool {
	pa, qa, _ := strings.Cut(a, "?")
	pb, qb, _ := strings.Cut(b, "?")
	if pa != pb {
		return false
	}
	sa, sb := strings.Split(qa, "&"), strings.Split(qb, "&")
	if len(sa) != len(sb) {
		return false
	}
	seen := map[string]int{}
	for _, x := range sa {
		seen[x]++
	}
	for _, x := range sb {
		if seen[x] == 0 {
			return false
		}
		seen[x]--
	}
	return true
}

func TestDescribeError(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&client.Error{StatusCode: 401, Message: "token expired"}, notSignedIn},
		{&client.Error{StatusCode: 403, Message: "missing scope team:read"}, "forbidden: missing scope team:read"},
		{&client.Error{StatusCode: 404, Message: "team \x1b]0;x\x07ops not found"}, "not found: team ops not found"},
		{&client.Error{StatusCode: 429, RetryAfter: 1500e6}, "rate limited until 10:30:02, then r retries"},
		{&client.Error{StatusCode: 429}, "rate limited, retry later"},
		{&client.Error{StatusCode: 503, Message: "shutting down"}, "server error 503: shutting down"},
		{context.DeadlineExceeded, "the server did not answer in time (r to retry)"},
	}
	for _, tt := range tests {
		if got := describeError(tt.err, "", fixedTime); got != tt.want {
			t.Errorf("describeError(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// TestUnreachableServerIsNamedBriefly: with the server gone, the status
// line says why the request failed instead of starting with the request
// URL and losing the reason past the window's edge.
func TestUnreachableServerIsNamedBriefly(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c, err := client.New(url, client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = NewClientAPI(c).ListRepositories(context.Background(), 1, 50)
	if err == nil {
		t.Fatal("listing on a closed server succeeded")
	}
	got := describeError(err, "", fixedTime)
	if got != "cannot reach the server: connection refused (r to retry)" {
		t.Errorf("describeError(%v) = %q", err, got)
	}
}

func TestDescribeErrorNamesTheRefusedCredential(t *testing.T) {
	err := &client.Error{StatusCode: 401, Message: "invalid credential"}
	hint := "CHARTCTL_TOKEN was refused: check it, or unset it and run chartctl login"
	if got := describeError(err, hint, fixedTime); got != hint {
		t.Errorf("401 with a hint shows %q", got)
	}
	if got := describeError(err, "bad \x1b[2Jhint", fixedTime); got != "bad hint" {
		t.Errorf("the hint is not sanitized: %q", got)
	}
}
