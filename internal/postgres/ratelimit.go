package postgres

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/ratelimit"
)

// Rate limits shared by replicas (CONTRACT §12): the fixed windows of
// internal/ratelimit, kept in the rate_windows table so that a limit of
// 1000 an hour admits 1000 requests in total over every replica. A charge
// is one UPSERT per bucket that increments the window only while it has
// budget left (or opens a new one when it has expired); the row lock it
// takes makes concurrent charges exact. Several buckets charged at once
// run in one transaction, rolled back when any refuses, so nothing is
// consumed anywhere (all or nothing, as Set.Take).
//
// When the database cannot be reached the limiter admits the request: the
// request then fails on the store with 503 anyway, and /healthz or the
// static pages stay reachable.

// rateOpTimeout bounds one limiter statement.
const rateOpTimeout = 5 * time.Second

// RateLimits returns the ratelimit.Backend whose limiters and throttles
// live in this database. now is the clock (nil: time.Now).
func (db *DB) RateLimits(now func() time.Time) ratelimit.Backend {
	if now == nil {
		now = time.Now
	}
	return &rateBackend{db: db, now: now}
}

type rateBackend struct {
	db  *DB
	now func() time.Time
}

// NewLimiter returns a limiter of the buckets of limits.
func (b *rateBackend) NewLimiter(limits map[string]ratelimit.Limit) ratelimit.Limiter {
	l := &rateLimiter{b: b, limits: map[string]ratelimit.Limit{}}
	for name, lim := range limits {
		if !lim.Disabled() {
			l.limits[name] = lim
		}
	}
	return l
}

// NewThrottle returns a throttle whose windows are the bucket
// "throttle:"+name.
func (b *rateBackend) NewThrottle(name string, limit ratelimit.Limit) ratelimit.Failures {
	return &rateThrottle{b: b, bucket: "throttle:" + name, limit: limit}
}

// resetAfter is when a window opening at now ends: one window later,
// rounded up to a whole second (as internal/ratelimit does).
func resetAfter(now time.Time, window time.Duration) time.Time {
	reset := now.Add(window)
	if r := reset.Truncate(time.Second); !r.Equal(reset) {
		return r.Add(time.Second)
	}
	return reset
}

// retryAfter rounds d up to whole seconds, at least one.
func retryAfter(d time.Duration) time.Duration {
	secs := (d + time.Second - 1) / time.Second
	return max(secs, 1) * time.Second
}

// chargeSQL takes one unit of a window with budget left ($5 is the
// limit): it opens a new window when there is none or it expired, else
// increments it while used < limit. It returns the window when charged
// and no row when the window is exhausted.
const chargeSQL = `INSERT INTO rate_windows AS w (bucket, key, used, reset_at) VALUES ($1, $2, 1, $3)
	ON CONFLICT (bucket, key) DO UPDATE SET
		used = CASE WHEN w.reset_at <= $4 THEN 1 ELSE w.used + 1 END,
		reset_at = CASE WHEN w.reset_at <= $4 THEN EXCLUDED.reset_at ELSE w.reset_at END
	WHERE w.reset_at <= $4 OR w.used < $5
	RETURNING used, reset_at`

type rateLimiter struct {
	b      *rateBackend
	limits map[string]ratelimit.Limit
	calls  atomic.Int64
}

// Limit returns the bucket's limit.
func (l *rateLimiter) Limit(bucket string) ratelimit.Limit { return l.limits[bucket] }

// Take charges every request all or nothing (see ratelimit.Set.Take).
func (l *rateLimiter) Take(reqs ...ratelimit.Request) ratelimit.Decision {
	now := l.b.now()
	l.maybeSweep(now)
	var asked []ratelimit.Request
	for _, r := range reqs {
		if _, ok := l.limits[r.Bucket]; ok {
			asked = append(asked, r)
		}
	}
	if len(asked) == 0 {
		return ratelimit.Decision{Allowed: true}
	}
	ctx, cancel := context.WithTimeout(context.Background(), rateOpTimeout)
	defer cancel()
	var d ratelimit.Decision
	take := func(tx querier) error {
		d = ratelimit.Decision{Allowed: true, Results: make([]ratelimit.Result, 0, len(asked))}
		charged := make([]bool, 0, len(asked))
		refused := -1
		for _, r := range asked {
			lim := l.limits[r.Bucket]
			res := ratelimit.Result{Bucket: r.Bucket, Limit: lim.N}
			var used int
			var reset time.Time
			err := tx.QueryRow(ctx, chargeSQL, r.Bucket, r.Key, resetAfter(now, lim.Window), now, lim.N).Scan(&used, &reset)
			switch {
			case err == nil:
				res.Used, res.Remaining, res.Reset = used, lim.N-used, reset
			case errors.Is(err, pgx.ErrNoRows):
				if err := tx.QueryRow(ctx, `SELECT reset_at FROM rate_windows WHERE bucket = $1 AND key = $2`, r.Bucket, r.Key).Scan(&reset); err != nil {
					return err
				}
				res.Used, res.Remaining, res.Reset = lim.N, 0, reset
				d.Allowed = false
				if refused < 0 || reset.After(d.Results[refused].Reset) {
					refused = len(d.Results)
				}
			default:
				return err
			}
			charged = append(charged, err == nil)
			d.Results = append(d.Results, res)
		}
		if !d.Allowed {
			for i := range d.Results {
				if charged[i] {
					// Report the other buckets uncharged, as Set does.
					d.Results[i].Used--
					d.Results[i].Remaining++
				}
			}
			d.Tightest = d.Results[refused]
			d.RetryAfter = retryAfter(d.Tightest.Reset.Sub(now))
			return errRefused // roll back every charge
		}
		for i, r := range d.Results {
			if i == 0 || r.Remaining < d.Tightest.Remaining {
				d.Tightest = r
			}
		}
		return nil
	}
	var err error
	if len(asked) == 1 {
		// One bucket: one statement, which charges nothing when it
		// refuses, so no transaction is needed.
		err = take(l.b.db.pool)
	} else {
		err = l.b.db.txOpts(ctx, "take rate limit", pgx.TxOptions{}, func(tx pgx.Tx) error { return take(tx) })
	}
	if errors.Is(err, errRefused) || err == nil {
		return d
	}
	// The database is away: admit (the request fails on the store).
	return ratelimit.Decision{Allowed: true}
}

// errRefused rolls back the charges of a refused Take.
var errRefused = errors.New("rate limit refused")

// Peek reports a bucket's window for key without charging it.
func (l *rateLimiter) Peek(bucket, key string) ratelimit.Result {
	lim, ok := l.limits[bucket]
	if !ok {
		return ratelimit.Result{Bucket: bucket}
	}
	now := l.b.now()
	res := ratelimit.Result{Bucket: bucket, Limit: lim.N, Remaining: lim.N, Reset: resetAfter(now, lim.Window)}
	ctx, cancel := context.WithTimeout(context.Background(), rateOpTimeout)
	defer cancel()
	var used int
	var reset time.Time
	err := l.b.db.pool.QueryRow(ctx, `SELECT used, reset_at FROM rate_windows WHERE bucket = $1 AND key = $2 AND reset_at > $3`,
		bucket, key, now).Scan(&used, &reset)
	if err == nil {
		res.Used, res.Remaining, res.Reset = used, max(lim.N-used, 0), reset
	}
	return res
}

// maybeSweep deletes expired windows now and then (every 1024th call), in
// the background, so the table holds about the keys active in one window.
func (l *rateLimiter) maybeSweep(now time.Time) {
	if l.calls.Add(1)%1024 != 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), rateOpTimeout)
		defer cancel()
		_, _ = l.b.db.pool.Exec(ctx, `DELETE FROM rate_windows WHERE reset_at <= $1`, now)
	}()
}

// rateThrottle is a ratelimit.Failures in rate_windows.
type rateThrottle struct {
	b      *rateBackend
	bucket string
	limit  ratelimit.Limit
}

// Limit returns the budget of failures.
func (t *rateThrottle) Limit() ratelimit.Limit { return t.limit }

// Fail records one failed attempt by key; the count saturates at the
// limit, so a blocked client hammering on extends nothing.
func (t *rateThrottle) Fail(key string) {
	if t.limit.Disabled() {
		return
	}
	now := t.b.now()
	ctx, cancel := context.WithTimeout(context.Background(), rateOpTimeout)
	defer cancel()
	_, _ = t.b.db.pool.Exec(ctx, chargeSQL, t.bucket, key, resetAfter(now, t.limit.Window), now, t.limit.N)
	t.b.db.throttles.failed([2]string{t.bucket, key})
}

// Blocked reports whether key has used up its failures in the current
// window and how long until it may try again. While the replica is alone
// on the database the window is read once and kept (throttlememo.go).
func (t *rateThrottle) Blocked(key string) (bool, time.Duration) {
	if t.limit.Disabled() {
		return false, 0
	}
	now := t.b.now()
	k := [2]string{t.bucket, key}
	gen, alone := t.b.db.aloneGeneration()
	var fails uint64
	if alone {
		var w throttleWindow
		var ok bool
		if w, ok, fails = t.b.db.throttles.get(gen, k); ok {
			return t.blocked(w, now)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), rateOpTimeout)
	defer cancel()
	var w throttleWindow
	err := t.b.db.pool.QueryRow(ctx, `SELECT used, reset_at FROM rate_windows WHERE bucket = $1 AND key = $2 AND reset_at > $3`,
		t.bucket, key, now).Scan(&w.used, &w.reset)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		w = throttleWindow{}
	case err != nil:
		return false, 0
	}
	if alone {
		t.b.db.throttles.put(gen, k, w, fails)
	}
	return t.blocked(w, now)
}

// blocked answers Blocked from key's window w at now.
func (t *rateThrottle) blocked(w throttleWindow, now time.Time) (bool, time.Duration) {
	if w.used < t.limit.N || !w.reset.After(now) {
		return false, 0
	}
	return true, retryAfter(w.reset.Sub(now))
}
