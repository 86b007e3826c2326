package postgres_test

import (
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/ratelimit"
)

// TestRateLimitsShared: two stores on one database (two replicas) count
// against the same windows, exactly under concurrency; a refused Take
// consumes nothing in any bucket; windows reset; throttles block and
// saturate.
func TestRateLimitsShared(t *testing.T) {
	a := mustOpen(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	limits := map[string]ratelimit.Limit{"global": {N: 50, Window: time.Hour}, "upload": {N: 3, Window: time.Minute}, "off": {}}
	la := a.RateLimits(clock).NewLimiter(limits)
	lb := a.RateLimits(clock).NewLimiter(limits)

	var wg sync.WaitGroup
	allowed := make([]bool, 120)
	for i := range allowed {
		wg.Go(func() {
			l := la
			if i%2 == 1 {
				l = lb
			}
			allowed[i] = l.Take(ratelimit.Request{Bucket: "global", Key: "k1"}).Allowed
		})
	}
	wg.Wait()
	n := 0
	for _, ok := range allowed {
		if ok {
			n++
		}
	}
	if n != 50 {
		t.Fatalf("%d of 120 concurrent requests admitted against 50/1h, want 50", n)
	}
	r := lb.Peek("global", "k1")
	if r.Used != 50 || r.Remaining != 0 || !r.Reset.Equal(now.Add(time.Hour)) {
		t.Fatalf("Peek = %+v", r)
	}

	// All or nothing: the upload bucket refuses, the global one is not
	// charged.
	for range 3 {
		if d := la.Take(ratelimit.Request{Bucket: "global", Key: "k2"}, ratelimit.Request{Bucket: "upload", Key: "repo"}); !d.Allowed {
			t.Fatalf("Take refused: %+v", d)
		}
	}
	d := lb.Take(ratelimit.Request{Bucket: "global", Key: "k2"}, ratelimit.Request{Bucket: "upload", Key: "repo"}, ratelimit.Request{Bucket: "off", Key: "x"})
	if d.Allowed || d.Tightest.Bucket != "upload" || d.RetryAfter != time.Minute || len(d.Results) != 2 {
		t.Fatalf("Take over the upload limit = %+v", d)
	}
	if d.Results[0].Used != 3 || d.Results[0].Remaining != 47 {
		t.Fatalf("refused Take reports the global bucket as %+v, want it uncharged", d.Results[0])
	}
	if r := la.Peek("global", "k2"); r.Used != 3 {
		t.Fatalf("a refused Take charged the global bucket: %+v", r)
	}

	// The window resets.
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	if d := la.Take(ratelimit.Request{Bucket: "upload", Key: "repo"}); !d.Allowed || d.Tightest.Used != 1 {
		t.Fatalf("Take after the window = %+v", d)
	}
	if d := la.Take(ratelimit.Request{Bucket: "off", Key: "x"}); !d.Allowed || len(d.Results) != 0 {
		t.Fatalf("Take of a disabled bucket = %+v", d)
	}

	// Throttles: shared, blocking after N failures, per name.
	ta := a.RateLimits(clock).NewThrottle("signin", ratelimit.Limit{N: 3, Window: time.Minute})
	tb := a.RateLimits(clock).NewThrottle("signin", ratelimit.Limit{N: 3, Window: time.Minute})
	other := a.RateLimits(clock).NewThrottle("api", ratelimit.Limit{N: 3, Window: time.Minute})
	ta.Fail("ip1")
	tb.Fail("ip1")
	if blocked, _ := ta.Blocked("ip1"); blocked {
		t.Fatal("blocked after 2 of 3 failures")
	}
	for range 5 {
		tb.Fail("ip1")
	}
	blocked, wait := ta.Blocked("ip1")
	if !blocked || wait != time.Minute {
		t.Fatalf("Blocked = %v %v, want true 1m", blocked, wait)
	}
	if blocked, _ := other.Blocked("ip1"); blocked {
		t.Fatal("another throttle's failures counted")
	}
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	if blocked, _ := tb.Blocked("ip1"); blocked {
		t.Fatal("still blocked after the window")
	}
}
