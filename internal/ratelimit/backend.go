package ratelimit

import "time"

// Limiter decides the request budgets of named buckets: Set keeps them in
// this process's memory; a shared backend (internal/postgres) keeps them
// where every replica counts against the same windows.
type Limiter interface {
	// Limit returns the bucket's limit (the zero Limit when disabled).
	Limit(bucket string) Limit
	// Take charges every request all or nothing; see Set.Take.
	Take(reqs ...Request) Decision
	// Peek reports a window without charging it; see Set.Peek.
	Peek(bucket, key string) Result
}

// Failures counts failed attempts per key and blocks a key that failed too
// often; see Throttle.
type Failures interface {
	// Limit returns the budget of failures.
	Limit() Limit
	// Fail records one failed attempt by key.
	Fail(key string)
	// Blocked reports whether key is blocked and for how long.
	Blocked(key string) (bool, time.Duration)
}

// Backend makes the limiters of a server. Name tells a backend's
// throttles apart (the API's, the dashboard's per address, …), so that a
// shared backend keeps each in its own namespace.
type Backend interface {
	NewLimiter(limits map[string]Limit) Limiter
	NewThrottle(name string, limit Limit) Failures
}

// Memory is the Backend of one node: every limiter lives in this
// process's memory.
type Memory struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// NewLimiter returns a Set.
func (m Memory) NewLimiter(limits map[string]Limit) Limiter {
	return NewSet(limits, m.opts()...)
}

// NewThrottle returns a Throttle.
func (m Memory) NewThrottle(_ string, limit Limit) Failures {
	return NewThrottle(limit, m.opts()...)
}

func (m Memory) opts() []Option {
	if m.Now == nil {
		return nil
	}
	return []Option{WithClock(m.Now)}
}

var (
	_ Limiter  = (*Set)(nil)
	_ Failures = (*Throttle)(nil)
	_ Backend  = Memory{}
)
