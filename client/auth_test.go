package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

func TestTokenSentToServer(t *testing.T) {
	e := setup(t, WithUserAgent("ua-test"))
	e.mux.HandleFunc("GET /v1/user", func(w http.ResponseWriter, r *http.Request) {
		testHeader(t, r, "Authorization", "Bearer secret-token")
		testHeader(t, r, "User-Agent", "ua-test")
		writeData(t, w, User{Email: "a@example.com"}, nil)
	})
	if _, _, err := e.client.Users.Me(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestNoTokenWithoutOption(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.HandleFunc("GET /v1/user", func(w http.ResponseWriter, r *http.Request) {
		testHeader(t, r, "Authorization", "")
		writeError(w, http.StatusUnauthorized, CodeUnauthorized, "no credential")
	})
	c, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Users.Me(context.Background()); !IsUnauthorized(err) {
		t.Errorf("err = %v", err)
	}
}

// foreignServer is another host: it records any Authorization it receives.
func foreignServer(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		writeData(t, w, User{Email: "elsewhere@example.com"}, nil)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

func TestTokenNotSentOnCrossHostRedirect(t *testing.T) {
	foreign, seen := foreignServer(t)
	e := setup(t)
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		e.mux.HandleFunc(fmt.Sprintf("GET /v1/redirect/%d", code), func(w http.ResponseWriter, r *http.Request) {
			testHeader(t, r, "Authorization", "Bearer secret-token")
			http.Redirect(w, r, foreign.URL+"/v1/user", code)
		})
		req, err := e.client.NewRequest(http.MethodGet, fmt.Sprintf("v1/redirect/%d", code), nil)
		if err != nil {
			t.Fatal(err)
		}
		var u User
		if _, err := e.client.Do(context.Background(), req, &u); err != nil {
			t.Fatalf("%d: %v", code, err)
		}
		if u.Email != "elsewhere@example.com" {
			t.Fatalf("%d: redirect not followed: %+v", code, u)
		}
	}
	for i, h := range seen() {
		if h != "" {
			t.Errorf("request %d to the foreign host carried Authorization %q", i, h)
		}
	}
	if len(seen()) != 3 {
		t.Errorf("foreign host saw %d requests, want 3", len(seen()))
	}
}

func TestTokenKeptOnSameOriginRedirect(t *testing.T) {
	e := setup(t)
	e.mux.HandleFunc("GET /v1/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/v1/user", http.StatusMovedPermanently)
	})
	e.mux.HandleFunc("GET /v1/user", func(w http.ResponseWriter, r *http.Request) {
		testHeader(t, r, "Authorization", "Bearer secret-token")
		writeData(t, w, User{Email: "a@example.com"}, nil)
	})
	req, err := e.client.NewRequest(http.MethodGet, "v1/old", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Do(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
}

func TestTokenNotSentToOtherHostThroughSameClient(t *testing.T) {
	foreign, seen := foreignServer(t)
	e := setup(t)
	// An absolute URL to another host given to NewRequest resolves there.
	req, err := e.client.NewRequest(http.MethodGet, foreign.URL+"/v1/user", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer planted")
	if _, err := e.client.Do(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if got := seen(); len(got) != 1 || got[0] != "" {
		t.Errorf("foreign host saw Authorization %q", got)
	}
}

func TestOrigin(t *testing.T) {
	same := [][2]string{
		{"http://example.com", "http://EXAMPLE.com:80/x"},
		{"https://example.com/a", "https://example.com:443/b"},
		{"http://[::1]:8080", "http://[::1]:8080/v1"},
	}
	for _, p := range same {
		a, _ := url.Parse(p[0])
		b, _ := url.Parse(p[1])
		if origin(a) != origin(b) {
			t.Errorf("origin(%s) = %s != origin(%s) = %s", p[0], origin(a), p[1], origin(b))
		}
	}
	differ := [][2]string{
		{"http://example.com", "https://example.com"},
		{"http://example.com", "http://example.com:8080"},
		{"http://example.com", "http://api.example.com"},
		{"http://127.0.0.1:80", "http://localhost:80"},
	}
	for _, p := range differ {
		a, _ := url.Parse(p[0])
		b, _ := url.Parse(p[1])
		if origin(a) == origin(b) {
			t.Errorf("origin(%s) == origin(%s)", p[0], p[1])
		}
	}
}

// countingSource hands out a new short-lived token on every call.
type countingSource struct {
	mu sync.Mutex
	n  int
	// expired makes every token already expired, so that each request
	// needs a new one.
	expired bool
	err     error
}

func (s *countingSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	s.n++
	exp := time.Now().Add(time.Hour)
	if s.expired {
		exp = time.Now().Add(-time.Minute)
	}
	return &oauth2.Token{AccessToken: fmt.Sprintf("tok-%d", s.n), TokenType: "bearer", Expiry: exp}, nil
}

func TestTokenSourceRefreshes(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var got []string
	mux.HandleFunc("GET /v1/user", func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
		writeData(t, w, User{}, nil)
	})
	for _, tc := range []struct {
		expired bool
		want    []string
	}{
		{false, []string{"Bearer tok-1", "Bearer tok-1"}},
		{true, []string{"Bearer tok-1", "Bearer tok-2"}},
	} {
		got = nil
		src := &countingSource{expired: tc.expired}
		c, err := New(srv.URL, WithTokenSource(src))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, _, err := c.Users.Me(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("expired=%v: Authorization headers = %v, want %v", tc.expired, got, tc.want)
		}
	}
}

func TestTokenSourceError(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Error("request sent without a token")
	})
	refreshErr := errors.New("refresh token revoked")
	c, err := New(srv.URL, WithTokenSource(&countingSource{err: refreshErr}))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Users.Me(context.Background()); !errors.Is(err, refreshErr) {
		t.Errorf("err = %v, want the token source's error", err)
	}
}

func TestWithHTTPClientKeepsCallerClient(t *testing.T) {
	e := setup(t)
	e.mux.HandleFunc("GET /v1/user", func(w http.ResponseWriter, r *http.Request) {
		testHeader(t, r, "Authorization", "Bearer k")
		testHeader(t, r, "X-Through", "mine")
		writeData(t, w, User{}, nil)
	})
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("X-Through", "mine")
		return http.DefaultTransport.RoundTrip(r)
	})}
	orig := hc.Transport
	c, err := New(e.server.URL, WithHTTPClient(hc), WithToken("k"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Users.Me(context.Background()); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%p", hc.Transport) != fmt.Sprintf("%p", orig) {
		t.Error("the caller's http.Client was modified")
	}
}

// roundTripFunc adapts a function to http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
