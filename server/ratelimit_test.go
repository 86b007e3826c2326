package server_test

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

func withLimits(global, upload, search string) testkit.Option {
	return func(s *server.Server) {
		s.Config.GlobalLimit, _ = ratelimit.ParseLimit(global)
		s.Config.UploadLimit, _ = ratelimit.ParseLimit(upload)
		s.Config.SearchLimit, _ = ratelimit.ParseLimit(search)
	}
}

func TestGlobalLimitCountdownAnd429(t *testing.T) {
	s := testkit.StartServer(t, withLimits("5/1h", "0", "0"))
	start := time.Now()
	for i := 4; i >= 0; i-- {
		r := s.Do(t, "GET", "/v1/repositories", s.AdminKey, nil)
		if r.StatusCode != 200 {
			t.Fatalf("request %d: %d", 5-i, r.StatusCode)
		}
		if got := r.Header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(i) {
			t.Fatalf("Remaining = %s, want %d", got, i)
		}
		if r.Header.Get("X-RateLimit-Limit") != "5" || r.Header.Get("X-RateLimit-Resource") != "global" || r.Header.Get("X-RateLimit-Used") != strconv.Itoa(5-i) {
			t.Fatalf("headers = %v", r.Header)
		}
	}
	// /v1/rate-limit is not counted and reports the state.
	r := s.Do(t, "GET", "/v1/rate-limit", s.AdminKey, nil)
	var rl envelope[struct {
		Resources map[string]struct{ Limit, Remaining, Used int }
	}]
	r.JSON(t, &rl)
	if g := rl.Data.Resources["global"]; r.StatusCode != 200 || g.Remaining != 0 || g.Used != 5 {
		t.Fatalf("rate-limit: %d %s", r.StatusCode, r.Body)
	}
	r = s.Do(t, "GET", "/v1/repositories", s.AdminKey, nil)
	expectError(t, r, 429, "rate_limit_exceeded", "")
	var e errBody
	r.JSON(t, &e)
	ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || ra < 1 || ra > 3601 || e.Error.RetryAfter != ra || r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("429: Retry-After %q, body %s", r.Header.Get("Retry-After"), r.Body)
	}
	reset, _ := strconv.ParseInt(r.Header.Get("X-RateLimit-Reset"), 10, 64)
	if want := start.Add(time.Hour).Unix(); reset < want-2 || reset > want+2 {
		t.Fatalf("Reset = %d, want about %d", reset, want)
	}
	// Retry-After tells the truth: the window resets when it says.
	if d := time.Until(time.Unix(reset, 0)); int(d.Seconds()) > ra || ra-int(d.Seconds()) > 2 {
		t.Fatalf("Retry-After %d vs reset in %v", ra, d)
	}
	// Another key has its own budget.
	other := s.MustKey(t, s.Admin, chartctl.AllScopes...)
	if r := s.Do(t, "GET", "/v1/repositories", other, nil); r.StatusCode != 200 {
		t.Fatalf("other key: %d", r.StatusCode)
	}
}

func TestUploadBucketPerRepository(t *testing.T) {
	s := testkit.StartServer(t, withLimits("0", "2/1h", "0"))
	s.MustRepo(t, "a", "")
	s.MustRepo(t, "b", "")
	for i, v := range []string{"1.0.0", "1.0.1"} {
		r := s.Upload(t, "a", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "x", Version: v}), "")
		if r.StatusCode != 200 || r.Header.Get("X-RateLimit-Resource") != "upload" || r.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(1-i) {
			t.Fatalf("upload %d: %d %v", i, r.StatusCode, r.Header)
		}
	}
	r := s.Upload(t, "a", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "x", Version: "9.9.9"}), "")
	expectError(t, r, 429, "rate_limit_exceeded", "")
	// The refused upload stored nothing.
	if r := s.Do(t, "GET", "/v1/repositories/a/charts/x/9.9.9", s.AdminKey, nil); r.StatusCode != 404 {
		t.Fatalf("refused upload was stored: %d", r.StatusCode)
	}
	// Another repository has its own budget, with another key too.
	other := s.MustKey(t, s.Admin, chartctl.AllScopes...)
	if r := s.Upload(t, "b", other, testkit.MakeChart(t, testkit.Chart{Name: "x", Version: "1.0.0"}), ""); r.StatusCode != 200 {
		t.Fatalf("repo b: %d %s", r.StatusCode, r.Body)
	}
	// The upload budget is per repository, not per key.
	expectError(t, s.Upload(t, "a", other, testkit.MakeChart(t, testkit.Chart{Name: "x", Version: "9.9.8"}), ""), 429, "rate_limit_exceeded", "")
}

func TestSearchBucketPerIPAcrossKeys(t *testing.T) {
	s := testkit.StartServer(t, withLimits("0", "0", "3/1h"))
	k2 := s.MustKey(t, s.Admin, chartctl.AllScopes...)
	for i, k := range []string{s.AdminKey, k2, s.AdminKey} {
		if r := s.Do(t, "GET", "/v1/search?q=x", k, nil); r.StatusCode != 200 || r.Header.Get("X-RateLimit-Resource") != "search" {
			t.Fatalf("search %d: %d %v", i, r.StatusCode, r.Header)
		}
	}
	expectError(t, s.Do(t, "GET", "/v1/search?q=x", k2, nil), 429, "rate_limit_exceeded", "")
	// Other endpoints are not in the search bucket.
	if r := s.Do(t, "GET", "/v1/repositories", k2, nil); r.StatusCode != 200 {
		t.Fatalf("repositories: %d", r.StatusCode)
	}
}

func TestForwardedForNeedsTrustedProxy(t *testing.T) {
	s := testkit.StartServer(t, withLimits("0", "0", "1/1h"))
	// From an untrusted peer, X-Forwarded-For is ignored: spoofed addresses
	// share the connection's bucket.
	if r := s.Do(t, "GET", "/v1/search?q=x", s.AdminKey, nil, "X-Forwarded-For", "203.0.113.1"); r.StatusCode != 200 {
		t.Fatalf("first: %d", r.StatusCode)
	}
	expectError(t, s.Do(t, "GET", "/v1/search?q=x", s.AdminKey, nil, "X-Forwarded-For", "203.0.113.2"), 429, "rate_limit_exceeded", "")
}

func TestConcurrentBurstAdmitsExactlyTheBudget(t *testing.T) {
	s := testkit.StartServer(t, withLimits("25/1h", "0", "0"))
	const n = 60
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[int]int{}
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", s.URL+"/v1/repositories", nil)
			req.Header.Set("Authorization", "Bearer "+s.AdminKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			counts[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if counts[200] != 25 || counts[429] != n-25 {
		t.Fatalf("counts = %v, want 25×200 and %d×429", counts, n-25)
	}
}

func TestFailedAuthIsThrottled(t *testing.T) {
	s := testkit.StartServer(t)
	var last *testkit.Response
	for i := 0; i < 25; i++ {
		last = s.Do(t, "GET", "/v1/repositories", "chartctl_guess", nil)
	}
	expectError(t, last, 429, "rate_limit_exceeded", "")
	if last.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
}
