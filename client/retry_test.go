package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
)

func TestRetry429HonoursRetryAfter(t *testing.T) {
	e := setup(t)
	var calls atomic.Int32
	e.mux.HandleFunc("GET /v1/user", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "2")
			w.Header().Set("X-RateLimit-Remaining", "0")
			writeError(w, http.StatusTooManyRequests, CodeRateLimitExceeded, "rate limit exceeded")
			return
		}
		writeData(t, w, User{Email: "a@example.com"}, nil)
	})
	u, _, err := e.client.Users.Me(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if u.Email != "a@example.com" {
		t.Errorf("user = %+v", u)
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("calls = %d, want 2", got)
	}
	if got, want := e.recordedSleeps(), []time.Duration{2 * time.Second}; !reflect.DeepEqual(got, want) {
		t.Errorf("sleeps = %v, want %v", got, want)
	}
}

func TestRetry503ExponentialBackoff(t *testing.T) {
	e := setup(t)
	var calls atomic.Int32
	e.mux.HandleFunc("GET /v1/repositories/r", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			writeError(w, http.StatusServiceUnavailable, CodeUnavailable, "storage unreachable")
			return
		}
		writeData(t, w, Repository{Name: "r"}, nil)
	})
	var events []RetryEvent
	e.client.retryHook = func(ev RetryEvent) { events = append(events, ev) }
	repo, _, err := e.client.Repositories.Get(context.Background(), "r")
	if err != nil {
		t.Fatal(err)
	}
	if repo.Name != "r" || calls.Load() != 3 {
		t.Errorf("repo = %+v after %d calls", repo, calls.Load())
	}
	// Jitter returns its ceiling in tests: base, then twice the base.
	if got, want := e.recordedSleeps(), []time.Duration{retryBase, 2 * retryBase}; !reflect.DeepEqual(got, want) {
		t.Errorf("sleeps = %v, want %v", got, want)
	}
	if len(events) != 2 || events[0].Attempt != 1 || events[1].Attempt != 2 ||
		events[0].Method != "GET" || !isUnavailable(events[0].Err) {
		t.Errorf("events = %+v", events)
	}
}

// isUnavailable reports: a 503 *Error.
func isUnavailable(err error) bool { return hasCode(err, CodeUnavailable) }

func TestRetryGivesUpAfterMaxRetries(t *testing.T) {
	e := setup(t, WithMaxRetries(2))
	var calls atomic.Int32
	e.mux.HandleFunc("GET /v1/organizations", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		writeError(w, http.StatusBadGateway, CodeInternalError, "upstream down")
	})
	_, resp, err := e.client.Organizations.List(context.Background(), nil)
	var apiErr *Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadGateway {
		t.Fatalf("err = %v, want the 502", err)
	}
	if resp == nil || resp.StatusCode != http.StatusBadGateway {
		t.Errorf("resp = %v", resp)
	}
	if got := calls.Load(); got != 3 {
		t.Errorf("calls = %d, want 3 (1 + 2 retries)", got)
	}
}

func TestRetryDisabled(t *testing.T) {
	e := setup(t, WithMaxRetries(0))
	var calls atomic.Int32
	e.mux.HandleFunc("GET /v1/user", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		writeError(w, http.StatusServiceUnavailable, CodeUnavailable, "shutting down")
	})
	if _, _, err := e.client.Users.Me(context.Background()); !isUnavailable(err) {
		t.Fatalf("err = %v", err)
	}
	if calls.Load() != 1 {
		t.Errorf("calls = %d, want 1", calls.Load())
	}
}

func TestRetryDroppedConnection(t *testing.T) {
	e := setup(t)
	var calls atomic.Int32
	e.mux.HandleFunc("GET /v1/teams/core", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			// Close without answering: the client sees the connection drop.
			_ = conn.Close()
			return
		}
		writeData(t, w, Team{Name: "core"}, nil)
	})
	team, _, err := e.client.Teams.Get(context.Background(), "core")
	if err != nil {
		t.Fatal(err)
	}
	if team.Name != "core" || calls.Load() != 2 {
		t.Errorf("team = %+v after %d calls", team, calls.Load())
	}
	if got := e.recordedSleeps(); len(got) != 1 {
		t.Errorf("sleeps = %v, want one", got)
	}
}

func TestNoRetryOfPostOnDroppedConnection(t *testing.T) {
	e := setup(t)
	var calls atomic.Int32
	e.mux.HandleFunc("POST /v1/teams", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		_ = conn.Close()
	})
	_, resp, err := e.client.Teams.Create(context.Background(), &CreateTeamRequest{Name: "t", Organization: "o"})
	if err == nil || resp != nil {
		t.Fatalf("err = %v, resp = %v; want a connection error", err, resp)
	}
	if calls.Load() != 1 {
		t.Errorf("calls = %d: a POST whose fate is unknown was sent again", calls.Load())
	}
}

func TestNoRetryOfPostOn503(t *testing.T) {
	e := setup(t)
	var calls atomic.Int32
	e.mux.HandleFunc("POST /v1/repositories", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		writeError(w, http.StatusServiceUnavailable, CodeUnavailable, "shutting down")
	})
	_, _, err := e.client.Repositories.Create(context.Background(), &CreateRepositoryRequest{Name: "r"})
	if !isUnavailable(err) {
		t.Fatalf("err = %v", err)
	}
	if calls.Load() != 1 || len(e.recordedSleeps()) != 0 {
		t.Errorf("calls = %d, sleeps = %v: POST retried on 503", calls.Load(), e.recordedSleeps())
	}
}

func TestRetryPostOn429ResendsBody(t *testing.T) {
	e := setup(t)
	var calls atomic.Int32
	e.mux.HandleFunc("POST /v1/organizations", func(w http.ResponseWriter, r *http.Request) {
		// The refused request must carry the same body as the retried one.
		testJSONBody(t, r, `{"name":"acme"}`)
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusTooManyRequests, CodeRateLimitExceeded, "slow down")
			return
		}
		writeData(t, w, Organization{Name: "acme"}, nil)
	})
	org, _, err := e.client.Organizations.Create(context.Background(), &CreateOrganizationRequest{Name: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	if org.Name != "acme" || calls.Load() != 2 {
		t.Errorf("org = %+v after %d calls", org, calls.Load())
	}
}

func TestRetryMaxWaitExceeded(t *testing.T) {
	e := setup(t, WithMaxWait(time.Minute))
	var calls atomic.Int32
	e.mux.HandleFunc("GET /v1/search", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "120")
		writeError(w, http.StatusTooManyRequests, CodeRateLimitExceeded, "search rate limit exceeded")
	})
	_, _, err := e.client.Search.Charts(context.Background(), "nginx", nil)
	var apiErr *Error
	if !errors.As(err, &apiErr) || !IsRateLimited(err) {
		t.Fatalf("err = %v, want a 429 *Error", err)
	}
	if apiErr.RetryAfter != 2*time.Minute {
		t.Errorf("RetryAfter = %v, want 2m", apiErr.RetryAfter)
	}
	if calls.Load() != 1 || len(e.recordedSleeps()) != 0 {
		t.Errorf("calls = %d, sleeps = %v: a wait over MaxWait was slept", calls.Load(), e.recordedSleeps())
	}
}

func TestRetryMaxTotalWait(t *testing.T) {
	e := setup(t, WithMaxTotalWait(50*time.Second), WithMaxRetries(5))
	var calls atomic.Int32
	e.mux.HandleFunc("GET /v1/user", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "30")
		writeError(w, http.StatusTooManyRequests, CodeRateLimitExceeded, "slow down")
	})
	if _, _, err := e.client.Users.Me(context.Background()); !IsRateLimited(err) {
		t.Fatalf("err = %v", err)
	}
	// One 30 s wait fits in 50 s; a second would not.
	if got, want := e.recordedSleeps(), []time.Duration{30 * time.Second}; !reflect.DeepEqual(got, want) {
		t.Errorf("sleeps = %v, want %v", got, want)
	}
	if calls.Load() != 2 {
		t.Errorf("calls = %d, want 2", calls.Load())
	}
}

func TestRetryWaitCancelledByContext(t *testing.T) {
	e := setup(t)
	e.client.sleep = sleepContext // the real wait, ended by the cancel below
	var calls atomic.Int32
	e.mux.HandleFunc("GET /v1/user", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "45")
		writeError(w, http.StatusTooManyRequests, CodeRateLimitExceeded, "slow down")
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.client.retryHook = func(RetryEvent) { cancel() }
	_, _, err := e.client.Users.Me(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if !IsRateLimited(err) {
		t.Errorf("err = %v, want it to carry the 429 too", err)
	}
	if calls.Load() != 1 {
		t.Errorf("calls = %d, want 1", calls.Load())
	}
}

func TestCancelledContextBeforeRequest(t *testing.T) {
	e := setup(t)
	e.mux.HandleFunc("GET /v1/user", func(w http.ResponseWriter, r *http.Request) {
		t.Error("request sent with a cancelled context")
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := e.client.Users.Me(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if len(e.recordedSleeps()) != 0 {
		t.Error("retried after cancel")
	}
}

func TestBackoffCeiling(t *testing.T) {
	c, err := New("http://127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	c.jitter = func(n time.Duration) time.Duration { return n }
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		if got := c.backoff(i); got != w {
			t.Errorf("backoff(%d) = %v, want %v", i, got, w)
		}
	}
	if got := c.backoff(100); got != retryCap {
		t.Errorf("backoff(100) = %v", got)
	}
	for range 100 {
		if d := randomDuration(time.Second); d < 0 || d >= time.Second {
			t.Fatalf("randomDuration(1s) = %v", d)
		}
	}
	if randomDuration(0) != 0 {
		t.Error("randomDuration(0) != 0")
	}
}
