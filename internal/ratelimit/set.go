package ratelimit

import (
	"sync"
	"time"
)

// The bucket names of the HTTP contract (§7).
const (
	// Global is keyed by credential and counts every authenticated /v1
	// request except GET /v1/rate-limit.
	Global = "global"
	// Upload is keyed by repository and counts chart uploads.
	Upload = "upload"
	// Search is keyed by client IP and counts GET /v1/search.
	Search = "search"
)

// minSweepInterval is the fewest Take calls between two sweeps of expired
// windows; between sweeps the interval grows with the number of windows held,
// so sweeping costs amortized O(1) per call.
const minSweepInterval = 1024

// Option configures a Set or a Throttle.
type Option func(*options)

type options struct {
	now func() time.Time
}

// WithClock makes the Set or Throttle read the time from now instead of
// time.Now (tests advance a fake clock to cross a window's reset).
func WithClock(now func() time.Time) Option {
	return func(o *options) {
		if now != nil {
			o.now = now
		}
	}
}

func buildOptions(opts []Option) options {
	o := options{now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Request asks one bucket for one unit of budget for one key (a credential
// id, a repository name, a client IP key).
type Request struct {
	// Bucket names the bucket, such as Global.
	Bucket string
	// Key identifies whose budget is taken within the bucket.
	Key string
}

// Result is the state of one bucket's window for one key.
type Result struct {
	// Bucket names the bucket ("global", "upload", "search").
	Bucket string
	// Limit is the bucket's N (X-RateLimit-Limit).
	Limit int
	// Remaining is how many requests the window still admits
	// (X-RateLimit-Remaining).
	Remaining int
	// Used is how many requests the window has admitted (X-RateLimit-Used).
	Used int
	// Reset is when the window ends and the budget is full again
	// (X-RateLimit-Reset, in Unix seconds). Windows end on a whole second
	// (one window after the first request, rounded up), so Reset.Unix() is
	// exact.
	Reset time.Time
}

// Decision is the outcome of Take.
type Decision struct {
	// Allowed reports whether every bucket admitted the request; when false,
	// nothing was consumed in any bucket.
	Allowed bool
	// Results holds one entry per enabled bucket asked, in request order,
	// describing the window after the request was counted (or, on refusal,
	// as it stands, uncharged).
	Results []Result
	// Tightest is the result to report in the X-RateLimit-* headers: when
	// allowed, the bucket with the fewest requests remaining (ties go to the
	// earlier request); when refused, the refusing bucket (of several, the
	// one that resets last). Its Bucket is "" when no enabled bucket was asked.
	Tightest Result
	// RetryAfter is set only on refusal: the time until the refusing window
	// resets, rounded up to whole seconds and at least one second.
	RetryAfter time.Duration
}

// Set holds named buckets, each with its Limit and a fixed window per key.
// It is safe for concurrent use and exact: N concurrent Takes against a
// remaining budget of k admit exactly k.
type Set struct {
	now func() time.Time

	mu         sync.Mutex
	buckets    map[string]*bucket
	windows    int // windows held over all buckets
	sinceSweep int // Take calls since the last sweep
}

type bucket struct {
	limit   Limit
	windows map[string]window
}

// window is one key's fixed window: used requests until reset.
type window struct {
	used  int
	reset time.Time
}

// NewSet returns a Set with one bucket per entry of limits. Disabled limits
// (and bucket names not in limits) are skipped by Take: they never refuse and
// are not reported.
func NewSet(limits map[string]Limit, opts ...Option) *Set {
	o := buildOptions(opts)
	s := &Set{now: o.now, buckets: make(map[string]*bucket, len(limits))}
	for name, l := range limits {
		if l.Disabled() {
			continue
		}
		s.buckets[name] = &bucket{limit: l, windows: make(map[string]window)}
	}
	return s
}

// Limit returns the bucket's limit; a disabled or unknown bucket reports the
// zero (disabled) Limit.
func (s *Set) Limit(bucket string) Limit {
	if b, ok := s.buckets[bucket]; ok {
		return b.limit
	}
	return Limit{}
}

// Take charges one unit to every request's bucket and key, all or nothing:
// if any enabled bucket's window is exhausted, nothing is consumed anywhere
// and the Decision is a refusal. Requests naming a disabled or unknown bucket
// are skipped. Two requests for the same bucket and key charge it twice.
func (s *Set) Take(reqs ...Request) Decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.maybeSweep(now)

	d := Decision{Allowed: true, Results: make([]Result, 0, len(reqs))}
	refused := -1
	for i, req := range reqs {
		b, ok := s.buckets[req.Bucket]
		if !ok {
			continue
		}
		w := b.current(req.Key, now)
		// Earlier requests of this call for the same bucket and key are
		// pending charges against the same window.
		for _, prev := range reqs[:i] {
			if prev == req {
				w.used++
			}
		}
		r := Result{Bucket: req.Bucket, Limit: b.limit.N, Used: w.used, Remaining: b.limit.N - w.used, Reset: w.reset}
		if w.used >= b.limit.N {
			r.Used, r.Remaining = b.limit.N, 0
			d.Allowed = false
			if refused < 0 || r.Reset.After(d.Results[refused].Reset) {
				refused = len(d.Results)
			}
		}
		d.Results = append(d.Results, r)
	}

	if !d.Allowed {
		d.Tightest = d.Results[refused]
		d.RetryAfter = retryAfter(d.Tightest.Reset.Sub(now))
		return d
	}

	// Every bucket admits the request: charge them all.
	n := 0
	for _, req := range reqs {
		b, ok := s.buckets[req.Bucket]
		if !ok {
			continue
		}
		w := b.current(req.Key, now)
		if _, held := b.windows[req.Key]; !held {
			s.windows++
		}
		w.used++
		b.windows[req.Key] = w
		r := &d.Results[n]
		r.Used++
		r.Remaining--
		if n == 0 || r.Remaining < d.Tightest.Remaining {
			d.Tightest = *r
		}
		n++
	}
	return d
}

// Peek reports a bucket's window for key without counting a request. A key
// with no open window shows the full budget, resetting one window from now.
// A disabled or unknown bucket reports only its name (Limit 0).
func (s *Set) Peek(bucket, key string) Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return Result{Bucket: bucket}
	}
	w := b.current(key, s.now())
	return Result{Bucket: bucket, Limit: b.limit.N, Remaining: max(b.limit.N-w.used, 0), Used: w.used, Reset: w.reset}
}

// Len reports how many windows the Set holds over all buckets (expired ones
// included until the next sweep); for metrics and tests.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.windows
}

// current returns key's window as of now: the stored one if still open,
// otherwise a fresh one opening now. It does not store anything.
func (b *bucket) current(key string, now time.Time) window {
	if w, ok := b.windows[key]; ok && now.Before(w.reset) {
		return w
	}
	return window{reset: resetAfter(now, b.limit.Window)}
}

// resetAfter is when a window opening at now ends: one window later,
// rounded up to a whole second, so that X-RateLimit-Reset (Unix seconds)
// names an instant at which the budget really is full again.
func resetAfter(now time.Time, window time.Duration) time.Time {
	reset := now.Add(window)
	if r := reset.Truncate(time.Second); !r.Equal(reset) {
		return r.Add(time.Second)
	}
	return reset
}

// maybeSweep drops expired windows once enough calls have passed since the
// last sweep: at least minSweepInterval, and at least as many as windows
// held, so the cost per call stays O(1) amortized and memory stays bounded
// by the keys active within one window (plus one interval's worth).
func (s *Set) maybeSweep(now time.Time) {
	s.sinceSweep++
	if s.sinceSweep < minSweepInterval || s.sinceSweep < s.windows {
		return
	}
	s.sweep(now)
}

// sweep drops every expired window.
func (s *Set) sweep(now time.Time) {
	s.sinceSweep = 0
	for _, b := range s.buckets {
		for k, w := range b.windows {
			if !now.Before(w.reset) {
				delete(b.windows, k)
				s.windows--
			}
		}
	}
}

// retryAfter rounds d up to whole seconds, at least one.
func retryAfter(d time.Duration) time.Duration {
	secs := (d + time.Second - 1) / time.Second
	if secs < 1 {
		secs = 1
	}
	return secs * time.Second
}
