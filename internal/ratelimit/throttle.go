package ratelimit

import (
	"sync"
	"time"
)

// The default failed-authentication budget per client: DefaultAuthFailures
// failures within DefaultAuthWindow block further attempts until the window
// resets.
const (
	DefaultAuthFailures = 10
	DefaultAuthWindow   = time.Minute
)

// Throttle counts failed authentication attempts per key (a client IP key)
// in fixed windows, so credentials cannot be guessed at line speed. Once a
// key has failed Limit.N times in its window it is blocked until the window
// resets. A success does not clear the count: otherwise one valid key would
// let a client interleave unlimited guesses. Safe for concurrent use.
type Throttle struct {
	limit Limit
	now   func() time.Time

	mu         sync.Mutex
	failures   map[string]window
	sinceSweep int
}

// NewThrottle returns a Throttle allowing limit.N failures per limit.Window
// per key; a disabled limit never blocks.
func NewThrottle(limit Limit, opts ...Option) *Throttle {
	o := buildOptions(opts)
	return &Throttle{limit: limit, now: o.now, failures: make(map[string]window)}
}

// Limit returns the throttle's budget of failures.
func (t *Throttle) Limit() Limit { return t.limit }

// Fail records one failed attempt by key. The first failure opens the key's
// window.
func (t *Throttle) Fail(key string) {
	if t.limit.Disabled() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.sinceSweep++
	if t.sinceSweep >= minSweepInterval && t.sinceSweep >= len(t.failures) {
		t.sinceSweep = 0
		for k, w := range t.failures {
			if !now.Before(w.reset) {
				delete(t.failures, k)
			}
		}
	}
	w, ok := t.failures[key]
	if !ok || !now.Before(w.reset) {
		w = window{reset: resetAfter(now, t.limit.Window)}
	}
	// Saturate: a blocked client hammering on does not extend anything, and
	// the counter cannot overflow.
	if w.used < t.limit.N {
		w.used++
	}
	t.failures[key] = w
}

// Blocked reports whether key has used up its failures in the current
// window and, if so, how long until it may try again (whole seconds, at
// least one).
func (t *Throttle) Blocked(key string) (bool, time.Duration) {
	if t.limit.Disabled() {
		return false, 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	w, ok := t.failures[key]
	if !ok {
		return false, 0
	}
	now := t.now()
	if !now.Before(w.reset) || w.used < t.limit.N {
		return false, 0
	}
	return true, retryAfter(w.reset.Sub(now))
}

// Len reports how many keys the throttle holds (expired ones included until
// the next sweep); for metrics and tests.
func (t *Throttle) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.failures)
}
