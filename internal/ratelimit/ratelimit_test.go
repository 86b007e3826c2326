package ratelimit

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a settable clock for crossing window resets without sleeping.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 11, 21, 22, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestParseLimit(t *testing.T) {
	tests := []struct {
		in      string
		want    Limit
		wantErr bool
	}{
		{in: "1000/1h", want: Limit{1000, time.Hour}},
		{in: "100/30s", want: Limit{100, 30 * time.Second}},
		{in: "5/1m", want: Limit{5, time.Minute}},
		{in: " 300/1h ", want: Limit{300, time.Hour}},
		{in: "10/h", want: Limit{10, time.Hour}},
		{in: "10/90m", want: Limit{10, 90 * time.Minute}},
		{in: "7/1h30m", want: Limit{7, 90 * time.Minute}},
		{in: "2/1d", want: Limit{2, 24 * time.Hour}},
		{in: "0", want: Limit{}},
		{in: "0/1h", want: Limit{}},
		{in: "", wantErr: true},
		{in: "1000", wantErr: true},
		{in: "-1/1h", wantErr: true},
		{in: "x/1h", wantErr: true},
		{in: "1.5/1h", wantErr: true},
		{in: "10/", wantErr: true},
		{in: "10/soon", wantErr: true},
		{in: "10/0s", wantErr: true},
		{in: "10/-1h", wantErr: true},
		{in: "10/500ms", wantErr: true},
		{in: "10/0d", wantErr: true},
		{in: "10/1h/2", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseLimit(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseLimit(%q) = %v, want an error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseLimit(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("ParseLimit(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			back, err := ParseLimit(got.String())
			if err != nil || back != got {
				t.Fatalf("round trip of %q via %q = %+v, %v", tt.in, got.String(), back, err)
			}
		})
	}
}

func TestLimitString(t *testing.T) {
	tests := []struct {
		l    Limit
		want string
	}{
		{Limit{1000, time.Hour}, "1000/1h"},
		{Limit{100, 30 * time.Second}, "100/30s"},
		{Limit{5, 90 * time.Minute}, "5/90m"},
		{Limit{5, 1500 * time.Millisecond}, "5/1.5s"},
		{Limit{}, "0"},
		{Limit{N: 5}, "0"},
	}
	for _, tt := range tests {
		if got := tt.l.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.l, got, tt.want)
		}
	}
	if !(Limit{}).Disabled() || (Limit{1, time.Second}).Disabled() {
		t.Error("Disabled() wrong")
	}
}

func TestLimitIsAFlag(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	l := Limit{1000, time.Hour}
	fs.Var(&l, "rate-limit-global", "")
	if err := fs.Parse([]string{"--rate-limit-global", "20/1m"}); err != nil {
		t.Fatal(err)
	}
	if l != (Limit{20, time.Minute}) {
		t.Fatalf("flag set %+v", l)
	}
	if err := fs.Parse([]string{"--rate-limit-global", "lots"}); err == nil {
		t.Fatal("bad flag value accepted")
	}
	var u Limit
	if err := u.UnmarshalText([]byte("3/1s")); err != nil || u != (Limit{3, time.Second}) {
		t.Fatalf("UnmarshalText = %+v, %v", u, err)
	}
	if b, _ := u.MarshalText(); string(b) != "3/1s" {
		t.Fatalf("MarshalText = %q", b)
	}
}

func TestTakeCountsDownAndRefuses(t *testing.T) {
	clk := newFakeClock()
	start := clk.Now()
	s := NewSet(map[string]Limit{Global: {3, time.Hour}}, WithClock(clk.Now))

	for i := 1; i <= 3; i++ {
		d := s.Take(Request{Global, "key_1"})
		if !d.Allowed {
			t.Fatalf("request %d refused", i)
		}
		want := Result{Bucket: Global, Limit: 3, Used: i, Remaining: 3 - i, Reset: start.Add(time.Hour)}
		if d.Tightest != want || len(d.Results) != 1 || d.Results[0] != want {
			t.Fatalf("request %d: %+v, want %+v", i, d, want)
		}
		if d.RetryAfter != 0 {
			t.Fatalf("RetryAfter on an allowed request: %v", d.RetryAfter)
		}
		clk.Advance(10 * time.Minute)
	}
	d := s.Take(Request{Global, "key_1"})
	if d.Allowed {
		t.Fatal("fourth request allowed")
	}
	want := Result{Bucket: Global, Limit: 3, Used: 3, Remaining: 0, Reset: start.Add(time.Hour)}
	if d.Tightest != want {
		t.Fatalf("refusal reports %+v, want %+v", d.Tightest, want)
	}
	if d.RetryAfter != 30*time.Minute {
		t.Fatalf("RetryAfter = %v, want 30m", d.RetryAfter)
	}
	// Another key has its own window.
	if d := s.Take(Request{Global, "key_2"}); !d.Allowed || d.Tightest.Remaining != 2 {
		t.Fatalf("other key: %+v", d)
	}
}

func TestWindowResets(t *testing.T) {
	clk := newFakeClock()
	s := NewSet(map[string]Limit{Search: {2, time.Minute}}, WithClock(clk.Now))
	s.Take(Request{Search, "10.0.0.1"})
	clk.Advance(30 * time.Second)
	s.Take(Request{Search, "10.0.0.1"})
	clk.Advance(29*time.Second + 500*time.Millisecond)
	d := s.Take(Request{Search, "10.0.0.1"})
	if d.Allowed {
		t.Fatal("allowed before the reset")
	}
	if d.RetryAfter != time.Second {
		t.Fatalf("RetryAfter = %v, want 1s (0.5s rounded up)", d.RetryAfter)
	}
	clk.Advance(500 * time.Millisecond) // exactly the reset instant
	d = s.Take(Request{Search, "10.0.0.1"})
	if !d.Allowed || d.Tightest.Used != 1 || !d.Tightest.Reset.Equal(clk.Now().Add(time.Minute)) {
		t.Fatalf("after reset: %+v", d)
	}
}

func TestRetryAfterAtLeastOneSecond(t *testing.T) {
	for _, tt := range []struct{ in, want time.Duration }{
		{0, time.Second}, {time.Nanosecond, time.Second}, {time.Second, time.Second},
		{time.Second + 1, 2 * time.Second}, {-time.Second, time.Second}, {time.Hour, time.Hour},
	} {
		if got := retryAfter(tt.in); got != tt.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestTakeAllOrNothing(t *testing.T) {
	clk := newFakeClock()
	start := clk.Now()
	s := NewSet(map[string]Limit{
		Global: {10, time.Hour},
		Upload: {2, time.Hour},
	}, WithClock(clk.Now))
	up := func(key string) Decision {
		return s.Take(Request{Global, key}, Request{Upload, "repo-a"})
	}
	if d := up("k1"); !d.Allowed || d.Tightest.Bucket != Upload || d.Tightest.Remaining != 1 {
		t.Fatalf("first upload: %+v", d)
	}
	clk.Advance(time.Minute)
	if d := up("k1"); !d.Allowed || d.Tightest.Bucket != Upload || d.Tightest.Remaining != 0 {
		t.Fatalf("second upload: %+v", d)
	}
	d := up("k1")
	if d.Allowed || d.Tightest.Bucket != Upload || d.Tightest.Remaining != 0 {
		t.Fatalf("third upload: %+v", d)
	}
	if len(d.Results) != 2 || d.Results[0].Bucket != Global || d.Results[0].Used != 2 || d.Results[0].Remaining != 8 {
		t.Fatalf("refusal should report global uncharged: %+v", d.Results)
	}
	// The refused upload consumed nothing from the global bucket.
	if p := s.Peek(Global, "k1"); p.Used != 2 || p.Remaining != 8 || !p.Reset.Equal(start.Add(time.Hour)) {
		t.Fatalf("global after refusal: %+v", p)
	}
	// A refused request for a key never seen does not open its window.
	d = up("k2")
	if d.Allowed {
		t.Fatal("upload for k2 allowed")
	}
	clk.Advance(time.Minute)
	if p := s.Peek(Global, "k2"); p.Used != 0 || !p.Reset.Equal(clk.Now().Add(time.Hour)) {
		t.Fatalf("refused request opened a window: %+v", p)
	}
	// Plain (non-upload) requests still pass on the global bucket.
	if d := s.Take(Request{Global, "k1"}); !d.Allowed || d.Tightest.Remaining != 7 {
		t.Fatalf("global only: %+v", d)
	}
}

func TestTightestOnRefusalIsTheLatestReset(t *testing.T) {
	clk := newFakeClock()
	s := NewSet(map[string]Limit{Global: {1, time.Hour}, Search: {1, time.Minute}}, WithClock(clk.Now))
	s.Take(Request{Global, "k"}, Request{Search, "ip"})
	d := s.Take(Request{Search, "ip"}, Request{Global, "k"})
	if d.Allowed || d.Tightest.Bucket != Global || d.RetryAfter != time.Hour {
		t.Fatalf("both exhausted: %+v", d)
	}
}

func TestTightestTiesGoToTheEarlierRequest(t *testing.T) {
	s := NewSet(map[string]Limit{Global: {5, time.Hour}, Search: {5, time.Hour}})
	d := s.Take(Request{Global, "k"}, Request{Search, "ip"})
	if d.Tightest.Bucket != Global {
		t.Fatalf("tie went to %q", d.Tightest.Bucket)
	}
	d = s.Take(Request{Global, "k2"}, Request{Search, "ip"})
	if d.Tightest.Bucket != Search || d.Tightest.Remaining != 3 {
		t.Fatalf("tightest = %+v", d.Tightest)
	}
}

func TestDisabledBucketsAreSkipped(t *testing.T) {
	s := NewSet(map[string]Limit{Global: {2, time.Hour}, Search: {}, Upload: mustParseLimit(t, "0")})
	for i := 0; i < 100; i++ {
		d := s.Take(Request{Search, "ip"}, Request{Upload, "r"}, Request{"unknown", "x"})
		if !d.Allowed || len(d.Results) != 0 || d.Tightest.Bucket != "" {
			t.Fatalf("disabled buckets reported or refused: %+v", d)
		}
	}
	d := s.Take(Request{Search, "ip"}, Request{Global, "k"})
	if !d.Allowed || len(d.Results) != 1 || d.Tightest.Bucket != Global {
		t.Fatalf("mixed: %+v", d)
	}
	if !s.Limit(Search).Disabled() || s.Limit(Global) != (Limit{2, time.Hour}) {
		t.Fatal("Limit() wrong")
	}
	if p := s.Peek(Search, "ip"); p != (Result{Bucket: Search}) {
		t.Fatalf("Peek on a disabled bucket: %+v", p)
	}
	if s.Len() != 1 {
		t.Fatalf("Len = %d, want 1", s.Len())
	}
}

func mustParseLimit(tb testing.TB, s string) Limit {
	tb.Helper()
	l, err := ParseLimit(s)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

func TestDuplicateRequestsChargeTwice(t *testing.T) {
	s := NewSet(map[string]Limit{Global: {3, time.Hour}})
	d := s.Take(Request{Global, "k"}, Request{Global, "k"})
	if !d.Allowed || d.Results[1].Used != 2 || d.Tightest.Remaining != 1 {
		t.Fatalf("%+v", d)
	}
	if d := s.Take(Request{Global, "k"}, Request{Global, "k"}); d.Allowed {
		t.Fatalf("over budget allowed: %+v", d)
	}
	if p := s.Peek(Global, "k"); p.Used != 2 {
		t.Fatalf("refused pair charged: %+v", p)
	}
}

func TestPeekIsUncounted(t *testing.T) {
	clk := newFakeClock()
	s := NewSet(map[string]Limit{Global: {5, time.Hour}}, WithClock(clk.Now))
	p := s.Peek(Global, "new")
	if p != (Result{Bucket: Global, Limit: 5, Remaining: 5, Used: 0, Reset: clk.Now().Add(time.Hour)}) {
		t.Fatalf("unseen key: %+v", p)
	}
	for i := 0; i < 10; i++ {
		s.Peek(Global, "new")
	}
	if s.Len() != 0 {
		t.Fatal("Peek stored a window")
	}
	s.Take(Request{Global, "new"})
	if p := s.Peek(Global, "new"); p.Used != 1 || p.Remaining != 4 {
		t.Fatalf("after one take: %+v", p)
	}
}

// N parallel Takes against a remaining budget of k admit exactly k, and a
// refused request charges none of its buckets.
func TestTakeExactUnderConcurrency(t *testing.T) {
	const (
		budget  = 37
		workers = 16
		each    = 25
	)
	s := NewSet(map[string]Limit{Global: {1000, time.Hour}, Upload: {budget, time.Hour}})
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if s.Take(Request{Global, "key"}, Request{Upload, "repo"}).Allowed {
					allowed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if got := allowed.Load(); got != budget {
		t.Fatalf("%d of %d requests allowed, want exactly %d", got, workers*each, budget)
	}
	if p := s.Peek(Global, "key"); p.Used != budget {
		t.Fatalf("global charged %d, want %d (refusals must consume none)", p.Used, budget)
	}
}

func TestSweepDropsExpiredWindows(t *testing.T) {
	clk := newFakeClock()
	s := NewSet(map[string]Limit{Search: {5, time.Minute}, Global: {5, time.Hour}}, WithClock(clk.Now))
	for i := 0; i < 5000; i++ {
		s.Take(Request{Search, "ip-" + strconv.Itoa(i)})
	}
	s.Take(Request{Global, "long-lived"})
	if s.Len() != 5001 {
		t.Fatalf("Len = %d, want 5001", s.Len())
	}
	clk.Advance(2 * time.Minute)
	// Enough calls on a few live keys to trigger the amortized sweep.
	for i := 0; i < 6000; i++ {
		s.Take(Request{Search, "busy-" + strconv.Itoa(i%3)})
	}
	if got := s.Len(); got != 4 {
		t.Fatalf("after sweep Len = %d, want 4 (3 busy + long-lived)", got)
	}
	if p := s.Peek(Global, "long-lived"); p.Used != 1 {
		t.Fatalf("live window swept: %+v", p)
	}
}

func TestThrottle(t *testing.T) {
	clk := newFakeClock()
	th := NewThrottle(Limit{3, time.Minute}, WithClock(clk.Now))
	for i := 0; i < 2; i++ {
		th.Fail("10.0.0.1")
	}
	if b, _ := th.Blocked("10.0.0.1"); b {
		t.Fatal("blocked after 2 of 3 failures")
	}
	clk.Advance(20 * time.Second)
	th.Fail("10.0.0.1")
	b, after := th.Blocked("10.0.0.1")
	if !b || after != 40*time.Second {
		t.Fatalf("Blocked = %v, %v; want true, 40s", b, after)
	}
	if b, _ := th.Blocked("10.0.0.2"); b {
		t.Fatal("another client blocked")
	}
	// Failing on while blocked does not extend the block.
	th.Fail("10.0.0.1")
	if _, after := th.Blocked("10.0.0.1"); after != 40*time.Second {
		t.Fatalf("block extended to %v", after)
	}
	clk.Advance(40 * time.Second)
	if b, _ := th.Blocked("10.0.0.1"); b {
		t.Fatal("still blocked after the window")
	}
	th.Fail("10.0.0.1")
	if b, _ := th.Blocked("10.0.0.1"); b {
		t.Fatal("a fresh window starts blocked")
	}
	if th.Limit() != (Limit{3, time.Minute}) {
		t.Fatal("Limit()")
	}
}

func TestThrottleDisabledAndSweep(t *testing.T) {
	off := NewThrottle(Limit{})
	for i := 0; i < 100; i++ {
		off.Fail("x")
	}
	if b, _ := off.Blocked("x"); b || off.Len() != 0 {
		t.Fatal("a disabled throttle blocks or stores")
	}

	clk := newFakeClock()
	th := NewThrottle(Limit{DefaultAuthFailures, DefaultAuthWindow}, WithClock(clk.Now))
	for i := 0; i < 3000; i++ {
		th.Fail(fmt.Sprintf("ip-%d", i))
	}
	clk.Advance(DefaultAuthWindow)
	for i := 0; i < 3000; i++ {
		th.Fail("one")
	}
	if th.Len() != 1 {
		t.Fatalf("Len = %d after sweep, want 1", th.Len())
	}
}

func TestThrottleConcurrent(t *testing.T) {
	th := NewThrottle(Limit{50, time.Hour})
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				th.Fail("ip")
				th.Blocked("ip")
			}
		}()
	}
	wg.Wait()
	if b, _ := th.Blocked("ip"); b {
		t.Fatal("40 failures of 50 blocked")
	}
	th.Fail("ip")
	for i := 0; i < 9; i++ {
		th.Fail("ip")
	}
	if b, _ := th.Blocked("ip"); !b {
		t.Fatal("50 failures not blocked")
	}
}

func BenchmarkTake(b *testing.B) {
	s := NewSet(map[string]Limit{
		Global: {1 << 40, time.Hour},
		Upload: {1 << 40, time.Hour},
		Search: {1 << 40, time.Hour},
	})
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = "key_" + strconv.Itoa(i)
	}
	b.Run("global", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			s.Take(Request{Global, keys[i%len(keys)]})
		}
	})
	b.Run("global+search", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			s.Take(Request{Global, keys[i%len(keys)]}, Request{Search, "203.0.113.7"})
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				s.Take(Request{Global, keys[i%len(keys)]})
				i++
			}
		})
	})
}

// Resets fall on whole seconds, so X-RateLimit-Reset in Unix seconds is the
// truth: at that second the budget is back.
func TestResetIsAWholeSecond(t *testing.T) {
	clk := newFakeClock()
	clk.Advance(250 * time.Millisecond)
	s := NewSet(map[string]Limit{Global: {1, time.Minute}}, WithClock(clk.Now))
	d := s.Take(Request{Global, "k"})
	want := clk.Now().Truncate(time.Second).Add(time.Minute + time.Second)
	if !d.Tightest.Reset.Equal(want) || d.Tightest.Reset.Nanosecond() != 0 {
		t.Fatalf("Reset = %v, want %v", d.Tightest.Reset, want)
	}
	if p := s.Peek(Global, "other"); p.Reset.Nanosecond() != 0 {
		t.Fatalf("Peek Reset = %v", p.Reset)
	}
	clk.Advance(60*time.Second + 750*time.Millisecond - time.Nanosecond)
	if d := s.Take(Request{Global, "k"}); d.Allowed || d.RetryAfter != time.Second {
		t.Fatalf("just before the reset second: %+v", d)
	}
	clk.Advance(time.Nanosecond)
	if !clk.Now().Equal(want) {
		t.Fatalf("clock %v", clk.Now())
	}
	if d := s.Take(Request{Global, "k"}); !d.Allowed {
		t.Fatalf("at X-RateLimit-Reset: %+v", d)
	}
}
