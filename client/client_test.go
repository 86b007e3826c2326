package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testEnv is a client wired to a test server, with retry waits recorded
// instead of slept.
type testEnv struct {
	client *Client
	mux    *http.ServeMux
	server *httptest.Server

	mu     sync.Mutex
	sleeps []time.Duration
}

// recordedSleeps returns the waits the client asked for so far.
func (e *testEnv) recordedSleeps() []time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]time.Duration(nil), e.sleeps...)
}

// setup starts a server on 127.0.0.1 and a client for it with a token.
// Waits are recorded and return at once; jitter is the maximum, so
// backoff waits are deterministic.
func setup(tb testing.TB, opts ...Option) *testEnv {
	tb.Helper()
	e := &testEnv{mux: http.NewServeMux()}
	e.server = httptest.NewServer(e.mux)
	tb.Cleanup(e.server.Close)
	all := append([]Option{WithToken("secret-token")}, opts...)
	c, err := New(e.server.URL, all...)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	c.sleep = func(ctx context.Context, d time.Duration) error {
		e.mu.Lock()
		e.sleeps = append(e.sleeps, d)
		e.mu.Unlock()
		return ctx.Err()
	}
	c.jitter = func(n time.Duration) time.Duration { return n }
	e.client = c
	return e
}

// writeData answers {"data": v} (and meta when given) with rate headers.
func writeData(tb testing.TB, w http.ResponseWriter, v any, meta *Meta) {
	tb.Helper()
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Request-Id", "req-123")
	w.Header().Set("X-RateLimit-Limit", "1000")
	w.Header().Set("X-RateLimit-Remaining", "998")
	w.Header().Set("X-RateLimit-Used", "2")
	w.Header().Set("X-RateLimit-Reset", "1800000000")
	w.Header().Set("X-RateLimit-Resource", "global")
	body := map[string]any{"data": v}
	if meta != nil {
		body["meta"] = meta
	}
	if err := json.NewEncoder(w).Encode(body); err != nil {
		tb.Errorf("encode answer: %v", err)
	}
}

// writeError answers the contract's error body.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Request-Id", "req-err")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(ErrorBody{Error: ErrorDetail{Code: code, Message: msg}})
}

func testQuery(tb testing.TB, r *http.Request, want url.Values) {
	tb.Helper()
	got := r.URL.Query()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		tb.Errorf("query = %v, want %v", got, want)
	}
}

func testHeader(tb testing.TB, r *http.Request, name, want string) {
	tb.Helper()
	if got := r.Header.Get(name); got != want {
		tb.Errorf("header %s = %q, want %q", name, got, want)
	}
}

// testJSONBody checks that the request body is exactly the JSON want.
func testJSONBody(tb testing.TB, r *http.Request, want string) {
	tb.Helper()
	testHeader(tb, r, "Content-Type", "application/json; charset=utf-8")
	data, err := io.ReadAll(r.Body)
	if err != nil {
		tb.Fatalf("read body: %v", err)
	}
	var got, exp any
	if err := json.Unmarshal(data, &got); err != nil {
		tb.Fatalf("body %q is not JSON: %v", data, err)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		tb.Fatalf("want %q is not JSON: %v", want, err)
	}
	if !reflect.DeepEqual(got, exp) {
		tb.Errorf("body = %s, want %s", data, want)
	}
}

func TestNewBaseURL(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/", true},
		{"https://charts.example.com/", "https://charts.example.com/", true},
		{"https://example.com/chartctl", "https://example.com/chartctl/", true},
		{"ftp://example.com", "", false},
		{"example.com", "", false},
		{"http://user:pw@example.com", "", false},
		{"http://example.com/?x=1", "", false},
		{"http://%zz", "", false},
	} {
		c, err := New(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("New(%q) error = %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if tc.ok && c.BaseURL.String() != tc.want {
			t.Errorf("New(%q).BaseURL = %s, want %s", tc.in, c.BaseURL, tc.want)
		}
	}
	for name, opt := range map[string]Option{
		"empty token":         WithToken(""),
		"nil token source":    WithTokenSource(nil),
		"nil http client":     WithHTTPClient(nil),
		"negative retries":    WithMaxRetries(-1),
		"negative wait":       WithMaxWait(-time.Second),
		"negative total wait": WithMaxTotalWait(-time.Second),
	} {
		if _, err := New("http://127.0.0.1", opt); err == nil {
			t.Errorf("New with %s: no error", name)
		}
	}
}

func TestNewRequest(t *testing.T) {
	c, err := New("https://example.com/prefix", WithUserAgent("test-agent/1"))
	if err != nil {
		t.Fatal(err)
	}
	req, err := c.NewRequest(http.MethodPost, "v1/repositories", &CreateRepositoryRequest{Name: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := req.URL.String(), "https://example.com/prefix/v1/repositories"; got != want {
		t.Errorf("URL = %s, want %s", got, want)
	}
	testHeader(t, req, "User-Agent", "test-agent/1")
	testHeader(t, req, "Accept", "application/json")
	testJSONBody(t, req, `{"name":"r"}`)
	if req.GetBody == nil {
		t.Error("GetBody is nil: a JSON request must be replayable")
	}
	if _, err := c.NewRequest(http.MethodGet, "/v1/user", nil); err == nil {
		t.Error("absolute path accepted")
	}
	if _, err := c.NewRequest(http.MethodPost, "v1/x", map[string]any{"f": func() {}}); err == nil {
		t.Error("unencodable body accepted")
	}
	req, err = c.NewRequest(http.MethodGet, "v1/user", nil)
	if err != nil {
		t.Fatal(err)
	}
	testHeader(t, req, "Content-Type", "")
}

func TestDoDecodesEnvelopeRateAndMeta(t *testing.T) {
	e := setup(t)
	e.mux.HandleFunc("GET /v1/repositories", func(w http.ResponseWriter, r *http.Request) {
		writeData(t, w, []Repository{{ID: "repo_1", Name: "a"}}, &Meta{Total: 41, Page: 2, Limit: 20})
	})
	repos, resp, err := e.client.Repositories.List(context.Background(), &ListOptions{Page: 2, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(repos) != 1 || repos[0].Name != "a" || repos[0].ID != "repo_1" {
		t.Errorf("repos = %+v", repos)
	}
	want := Rate{Limit: 1000, Remaining: 998, Used: 2, Reset: time.Unix(1800000000, 0).UTC(), Resource: "global"}
	if resp.Rate != want {
		t.Errorf("Rate = %+v, want %+v", resp.Rate, want)
	}
	if resp.RequestID != "req-123" {
		t.Errorf("RequestID = %q", resp.RequestID)
	}
	if resp.Meta == nil || *resp.Meta != (Meta{Total: 41, Page: 2, Limit: 20}) {
		t.Errorf("Meta = %+v", resp.Meta)
	}
	if got := resp.NextPage(); got != 3 {
		t.Errorf("NextPage = %d, want 3", got)
	}
}

func TestResponseNextPage(t *testing.T) {
	for _, tc := range []struct {
		meta *Meta
		want int
	}{
		{nil, 0},
		{&Meta{Total: 0, Page: 1, Limit: 20}, 0},
		{&Meta{Total: 20, Page: 1, Limit: 20}, 0},
		{&Meta{Total: 21, Page: 1, Limit: 20}, 2},
		{&Meta{Total: 100, Page: 5, Limit: 20}, 0},
		{&Meta{Total: 100, Page: 0, Limit: 0}, 0},
	} {
		r := &Response{Meta: tc.meta}
		if got := r.NextPage(); got != tc.want {
			t.Errorf("NextPage(%+v) = %d, want %d", tc.meta, got, tc.want)
		}
	}
	var nilResp *Response
	if nilResp.NextPage() != 0 {
		t.Error("nil Response has a next page")
	}
}

func TestDoBadJSON(t *testing.T) {
	e := setup(t)
	e.mux.HandleFunc("GET /v1/user", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"data": {"email": 7}}`)
	})
	e.mux.HandleFunc("GET /v1/rate-limit", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `<html>`)
	})
	if _, _, err := e.client.Users.Me(context.Background()); err == nil {
		t.Error("Me: wrong-typed field accepted")
	}
	_, _, err := e.client.RateLimit.Get(context.Background(), "")
	if err == nil {
		t.Fatal("RateLimit.Get: HTML accepted")
	}
	// A web page where the API should be (a wrong base URL, a proxy's
	// sign-in page) is named as such, not as a JSON syntax error.
	if !errors.Is(err, ErrNotAPI) || !strings.Contains(err.Error(), "text/html") || strings.Contains(err.Error(), "invalid character") {
		t.Errorf("HTML answer: %v, want ErrNotAPI naming text/html", err)
	}
}

func TestCheckResponseErrorBody(t *testing.T) {
	e := setup(t)
	e.mux.HandleFunc("POST /v1/repositories", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req-400")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"code":"invalid_parameter","message":"name must be 1-63 characters","parameter":"name"}}`)
	})
	_, resp, err := e.client.Repositories.Create(context.Background(), &CreateRepositoryRequest{Name: "-"})
	var apiErr *Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want *Error", err)
	}
	want := &Error{
		StatusCode: 400, Code: CodeInvalidParameter, Message: "name must be 1-63 characters",
		Parameter: "name", RequestID: "req-400", Method: "POST", URL: e.server.URL + "/v1/repositories",
	}
	if !reflect.DeepEqual(apiErr, want) {
		t.Errorf("error = %+v\nwant    %+v", apiErr, want)
	}
	if got := apiErr.Error(); got != "name must be 1-63 characters (400 invalid_parameter, request id req-400)" {
		t.Errorf("Error() = %q", got)
	}
	if resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("Response = %+v, want the 400", resp)
	}
	if len(e.recordedSleeps()) != 0 {
		t.Error("a 400 was retried")
	}
}

func TestCheckResponseWithoutBody(t *testing.T) {
	for _, tc := range []struct {
		status   int
		body     string
		wantCode string
		wantMsg  string
	}{
		{http.StatusBadGateway, "<html>bad gateway</html>", CodeInternalError, "bad gateway"},
		{http.StatusNotFound, "", CodeNotFound, "not found"},
		{http.StatusUnauthorized, `{"error":{}}`, CodeUnauthorized, "unauthorized"},
		{599, "", CodeInternalError, "unexpected status 599"},
	} {
		resp := &http.Response{
			StatusCode: tc.status,
			Header:     http.Header{},
			Body:       io.NopCloser(strings.NewReader(tc.body)),
		}
		err := CheckResponse(resp)
		var apiErr *Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("%d: err = %v", tc.status, err)
		}
		if apiErr.Code != tc.wantCode || apiErr.Message != tc.wantMsg || apiErr.StatusCode != tc.status {
			t.Errorf("%d: got %+v, want code %s message %q", tc.status, apiErr, tc.wantCode, tc.wantMsg)
		}
	}
	ok := &http.Response{StatusCode: 204, Header: http.Header{}, Body: http.NoBody}
	if err := CheckResponse(ok); err != nil {
		t.Errorf("204: %v", err)
	}
}

func TestCheckResponseRetryAfter(t *testing.T) {
	future := time.Now().Add(time.Hour)
	for name, tc := range map[string]struct {
		header http.Header
		body   string
		check  func(d time.Duration) bool
	}{
		"seconds header": {
			header: http.Header{"Retry-After": {"7"}},
			check:  func(d time.Duration) bool { return d == 7*time.Second },
		},
		"http date header": {
			header: http.Header{"Retry-After": {future.UTC().Format(http.TimeFormat)}},
			check:  func(d time.Duration) bool { return d > 50*time.Minute && d <= time.Hour },
		},
		"body only": {
			header: http.Header{},
			body:   `{"error":{"code":"rate_limit_exceeded","message":"slow down","retry_after":12}}`,
			check:  func(d time.Duration) bool { return d == 12*time.Second },
		},
		"rate reset only": {
			header: http.Header{
				"X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Reset":     {strconv.FormatInt(future.Unix(), 10)},
			},
			check: func(d time.Duration) bool { return d > 50*time.Minute && d <= time.Hour },
		},
		"garbage": {
			header: http.Header{"Retry-After": {"soon"}},
			check:  func(d time.Duration) bool { return d == 0 },
		},
	} {
		resp := &http.Response{
			StatusCode: http.StatusTooManyRequests,
			Header:     tc.header,
			Body:       io.NopCloser(strings.NewReader(tc.body)),
		}
		var apiErr *Error
		if !errors.As(CheckResponse(resp), &apiErr) {
			t.Fatalf("%s: not an *Error", name)
		}
		if !tc.check(apiErr.RetryAfter) {
			t.Errorf("%s: RetryAfter = %v", name, apiErr.RetryAfter)
		}
		if !IsRateLimited(apiErr) {
			t.Errorf("%s: IsRateLimited false", name)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 22, 33, 45, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                              0,
		"0":                             0,
		"-5":                            0,
		" 3 ":                           3 * time.Second,
		"Sat, 21 Nov 2026 22:34:45 GMT": time.Minute,
		"Sat, 21 Nov 2026 22:30:00 GMT": 0,
		"tomorrow":                      0,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestErrorPredicates(t *testing.T) {
	e := setup(t)
	codes := map[string]int{
		"notfound": 404, "unauth": 401, "forbidden": 403, "conflict": 409, "limited": 429,
	}
	for name, status := range codes {
		e.mux.HandleFunc("GET /v1/repositories/"+name, func(w http.ResponseWriter, r *http.Request) {
			if status == 429 {
				w.Header().Set("Retry-After", "3600")
			}
			writeError(w, status, CodeForStatus(status), name)
		})
	}
	preds := map[string]func(error) bool{
		"notfound": IsNotFound, "unauth": IsUnauthorized, "forbidden": IsForbidden,
		"conflict": IsConflict, "limited": IsRateLimited,
	}
	for name := range codes {
		_, _, err := e.client.Repositories.Get(context.Background(), name)
		wrapped := fmt.Errorf("command: %w", err)
		for pname, pred := range preds {
			if got := pred(wrapped); got != (pname == name) {
				t.Errorf("%s on %s answer = %v", pname, name, got)
			}
		}
	}
	if IsNotFound(nil) || IsNotFound(errors.New("404")) {
		t.Error("IsNotFound true for a non-*Error")
	}
}
