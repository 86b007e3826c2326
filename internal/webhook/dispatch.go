package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/debounce"
	"github.com/chartctl/chartctl/internal/neterr"
)

// Opener decrypts stored webhook secrets (a *secrets.Box).
type Opener interface {
	Open(sealed []byte) ([]byte, error)
}

// Options configure a Dispatcher.
type Options struct {
	// BaseURL is the server's external URL, the prefix of each event's
	// source.
	BaseURL string
	// RetryBase is the first backoff ceiling (default 5s); it doubles
	// after each failure, capped at an hour, and each wait is drawn
	// uniformly below it (full jitter).
	RetryBase time.Duration
	// GiveUpAfter is how long a delivery is retried (default 24h); a
	// delivery given up disables its webhook.
	GiveUpAfter time.Duration
	// Timeout bounds one attempt (default 10s).
	Timeout time.Duration
	// AllowPrivate lets webhooks reach private and loopback addresses.
	AllowPrivate bool
	// Poll is how often the queue is checked without a wake-up (default
	// 1s).
	Poll time.Duration
	// Gather is how long the dispatcher waits after a wake-up before it
	// claims (default 50ms, negative for none), so a burst of changes is
	// sent in one round: one claim and one commit of attempts for all of
	// them instead of one each, which would compete with the writes of
	// the burst itself.
	Gather time.Duration
	Logger *slog.Logger
	Now    func() time.Time
	// Client, if set, replaces the client NewClient builds.
	Client *http.Client
	// Workers bounds how many webhooks are sent to at once (default 16);
	// PerHost bounds how many of them share one receiving host (default
	// 4), so one host's slow receivers hold at most that many workers.
	// Deliveries to one webhook always go one at a time, in order.
	Workers int
	PerHost int
}

// Dispatcher sends queued deliveries. Create it with New and start Run.
//
// Each webhook's queue is a task: its claimed deliveries, sent one at a
// time in order by one worker. Tasks of different webhooks run side by
// side in a bounded pool with a per-host cap, so a slow receiver delays
// only its own webhook's deliveries (CONTRACT §18 decision 13). The
// store's claim (a lease) keeps a webhook whose task is running out of
// every other claim, this replica's or another's, until the task's
// attempts are recorded.
type Dispatcher struct {
	store   chartctl.Store
	secrets Opener
	opts    Options
	client  *http.Client
	wake    chan struct{}
}

// task is one webhook's claimed deliveries, in queue order.
type task struct {
	queue []*chartctl.Delivery
	// hook is the webhook, nil if it could not be read when claimed.
	hook    *chartctl.Webhook
	host    string
	claimed time.Time
}

// finished is a task's outcome: its attempts, to be recorded.
type finished struct {
	host    string
	results []chartctl.AttemptResult
}

// New returns a Dispatcher over store's delivery queue.
func New(store chartctl.Store, secrets Opener, opts Options) *Dispatcher {
	if opts.RetryBase <= 0 {
		opts.RetryBase = 5 * time.Second
	}
	if opts.GiveUpAfter <= 0 {
		opts.GiveUpAfter = 24 * time.Hour
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Gather == 0 {
		opts.Gather = 50 * time.Millisecond
	}
	if opts.Workers <= 0 {
		opts.Workers = 16
	}
	if opts.PerHost <= 0 {
		opts.PerHost = 4
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := opts.Client
	if c == nil {
		c = NewClient(opts.AllowPrivate, opts.Timeout)
	}
	return &Dispatcher{store: store, secrets: secrets, opts: opts, client: c, wake: make(chan struct{}, 1)}
}

// Notify wakes the dispatcher: events were committed.
func (d *Dispatcher) Notify() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// lease is how long a claimed delivery is hidden from other claims: longer
// than an attempt can take.
func (d *Dispatcher) lease() time.Duration { return 2*d.opts.Timeout + 5*time.Second }

// Per round, the dispatcher claims at most perWebhook deliveries of each
// webhook and roundLimit in all.
const (
	perWebhook = 32
	roundLimit = 512
)

// Run delivers until ctx is done. Pending deliveries left by a previous
// run (a crash, a restart) go out first.
//
// Run owns the scheduling: it claims due deliveries while workers are
// free, starts each webhook's task when a worker and a slot of its host
// are free, and records finished tasks' attempts — every task finished by
// then in one store transaction, so a burst across many webhooks costs
// few commits, while no task waits for another to finish.
func (d *Dispatcher) Run(ctx context.Context) {
	p := d.newPool()
	poll := time.NewTimer(0)
	defer poll.Stop()
	// claim claims what is due, unless no worker is free: those would
	// only wait, their claims running out.
	claim := func() {
		if p.full() || ctx.Err() != nil {
			return
		}
		p.waiting = append(p.waiting, d.claim(ctx)...)
		p.start(ctx)
	}
	finish := func(f finished) {
		// Every task finished by now is recorded with this one.
		results := p.release(f)
		for more := true; more; {
			select {
			case g := <-p.done:
				results = append(results, p.release(g)...)
			default:
				more = false
			}
		}
		d.record(ctx, results)
	}
	for {
		select {
		case <-ctx.Done():
			// Running tasks stop at their next delivery; their claims run
			// out and the deliveries are sent again after the restart.
			for ; p.running > 0; p.running-- {
				<-p.done
			}
			return
		case f := <-p.done:
			finish(f)
			// More may be due behind what the task sent, and a worker is
			// free.
			p.start(ctx)
			claim()
		case <-d.wake:
			if !debounce.Pause(ctx, d.opts.Gather) {
				continue
			}
			claim()
		case <-poll.C:
			p.start(ctx)
			claim()
			poll.Reset(d.opts.Poll)
		}
	}
}

// pool runs webhooks' tasks within the dispatcher's bounds: Workers at
// once, PerHost of them per receiving host. Its fields belong to the one
// goroutine scheduling (Run's or RunOnce's); tasks report on done.
type pool struct {
	d       *Dispatcher
	running int
	perHost map[string]int
	// waiting are claimed tasks not started yet, in claim order.
	waiting []*task
	done    chan finished
}

func (d *Dispatcher) newPool() *pool {
	return &pool{d: d, perHost: map[string]int{}, done: make(chan finished, d.opts.Workers)}
}

// full reports whether every worker is busy.
func (p *pool) full() bool { return p.running >= p.d.opts.Workers }

// start runs the waiting tasks that fit in the pool and their host's
// cap, in claim order. A task that waited so long that its claim would
// run out before it could send is given back unsent, so it is never sent
// by two replicas at once.
func (p *pool) start(ctx context.Context) {
	d := p.d
	kept := p.waiting[:0]
	for _, t := range p.waiting {
		if p.full() || p.perHost[t.host] >= d.opts.PerHost {
			if d.opts.Now().Sub(t.claimed)+d.opts.Timeout+leaseMargin > d.lease() {
				d.record(ctx, unsent(t.queue, d.opts.Now()))
				continue
			}
			kept = append(kept, t)
			continue
		}
		p.running++
		p.perHost[t.host]++
		go func() { p.done <- finished{t.host, d.deliverQueue(ctx, t)} }()
	}
	p.waiting = kept
}

// release frees the worker and host slot of a finished task and returns
// its attempts.
func (p *pool) release(f finished) []chartctl.AttemptResult {
	p.running--
	if p.perHost[f.host]--; p.perHost[f.host] == 0 {
		delete(p.perHost, f.host)
	}
	return f.results
}

// leaseMargin is what a task leaves of its claim's lease for recording
// its attempts.
const leaseMargin = 5 * time.Second

// claim claims the deliveries due now and returns them as tasks, one per
// webhook.
func (d *Dispatcher) claim(ctx context.Context) []*task {
	now := d.opts.Now()
	claimed, err := d.store.ClaimDeliveries(ctx, now, d.lease(), perWebhook, roundLimit)
	if err != nil {
		if ctx.Err() == nil {
			d.opts.Logger.Error("claim webhook deliveries", "err", err)
		}
		return nil
	}
	var tasks []*task
	for i, dl := range claimed {
		if i == 0 || dl.WebhookID != claimed[i-1].WebhookID {
			tasks = append(tasks, &task{claimed: now})
		}
		t := tasks[len(tasks)-1]
		t.queue = append(t.queue, dl)
	}
	for _, t := range tasks {
		if w, err := d.store.Webhook(ctx, t.queue[0].WebhookID); err == nil {
			t.hook = w
			if u, err := url.Parse(w.URL); err == nil {
				t.host = strings.ToLower(u.Hostname())
			}
		}
	}
	return tasks
}

// record stores attempts; when it fails the claims run out and the
// deliveries are sent again.
func (d *Dispatcher) record(ctx context.Context, results []chartctl.AttemptResult) {
	if len(results) == 0 {
		return
	}
	if err := d.store.RecordAttempts(context.WithoutCancel(ctx), results); err != nil {
		d.opts.Logger.Error("record webhook deliveries", "deliveries", len(results), "err", err)
	}
}

// unsent gives claimed deliveries back, due at now, without an attempt.
func unsent(q []*chartctl.Delivery, now time.Time) []chartctl.AttemptResult {
	out := make([]chartctl.AttemptResult, 0, len(q))
	for _, dl := range q {
		out = append(out, chartctl.AttemptResult{DeliveryID: dl.ID, Unsent: true, State: chartctl.DeliveryPending, Next: &now})
	}
	return out
}

// RunOnce claims the deliveries due now — the head of each webhook's
// queue — and sends them: the webhooks concurrently (within the pool and
// per-host bounds), each webhook's in order, stopping at its first
// failure (the rest go back to the queue unsent, behind it). It records
// the round's attempts in one store transaction and returns how many
// deliveries it claimed. Run does the same continuously, without waiting
// for a round's slowest webhook.
func (d *Dispatcher) RunOnce(ctx context.Context) int {
	p := d.newPool()
	p.waiting = d.claim(ctx)
	n := 0
	for _, t := range p.waiting {
		n += len(t.queue)
	}
	p.start(ctx)
	var all []chartctl.AttemptResult
	for p.running > 0 {
		all = append(all, p.release(<-p.done)...)
		p.start(ctx)
	}
	d.record(ctx, all)
	return n
}

// deliverQueue sends one webhook's claimed deliveries in order until one
// fails; those after it are returned unsent, due again at once (behind
// the failed one, which the store's claims do not pass). It also returns
// unsent those it has no time left to send before the claim runs out.
func (d *Dispatcher) deliverQueue(ctx context.Context, t *task) []chartctl.AttemptResult {
	q, w := t.queue, t.hook
	if w == nil {
		var err error
		if w, err = d.store.Webhook(ctx, q[0].WebhookID); err != nil {
			// Deleted meanwhile (its deliveries went with it), or the
			// store failed: the claims run out.
			d.opts.Logger.Error("load webhook", "webhook", q[0].WebhookID, "err", err)
			return nil
		}
	}
	var out []chartctl.AttemptResult
	for i, dl := range q {
		if i > 0 && d.opts.Now().Sub(t.claimed)+d.opts.Timeout+leaseMargin > d.lease() {
			// Another attempt could outlast the claim: another replica
			// would then claim this delivery while it is being sent.
			return append(out, unsent(q[i:], d.opts.Now())...)
		}
		r := d.deliver(ctx, w, dl)
		if r == nil {
			return out // stopping: the leases run out
		}
		out = append(out, *r)
		if r.State != chartctl.DeliveryDelivered {
			return append(out, unsent(q[i+1:], d.opts.Now())...)
		}
	}
	return out
}

const excerptSize = 1024

// deliver sends one delivery to w and returns its attempt, nil when the
// dispatcher is stopping.
func (d *Dispatcher) deliver(ctx context.Context, w *chartctl.Webhook, dl *chartctl.Delivery) *chartctl.AttemptResult {
	start := d.opts.Now()
	status, excerpt, sendErr := d.send(ctx, w, dl.Event)
	if ctx.Err() != nil {
		// Shutting down: the lease expires and the delivery is tried again
		// after the restart.
		return nil
	}
	a := chartctl.Attempt{At: start, StatusCode: status, Duration: d.opts.Now().Sub(start), ResponseExcerpt: excerpt}
	if sendErr != nil {
		a.ResponseExcerpt = sendErr.Error()
	}
	state, next, disable := chartctl.DeliveryDelivered, (*time.Time)(nil), ""
	if sendErr != nil || status < 200 || status > 299 {
		state = chartctl.DeliveryPending
		now := d.opts.Now()
		if now.Sub(dl.CreatedAt) >= d.opts.GiveUpAfter {
			state = chartctl.DeliveryFailed
			disable = fmt.Sprintf("Deliveries failed for %s since %s (last: %s); fix the receiver and set active to true.",
				d.opts.GiveUpAfter, dl.CreatedAt.UTC().Format(time.RFC3339), lastFailure(status, sendErr))
		} else {
			t := now.Add(Backoff(d.opts.RetryBase, len(dl.Attempts)+1))
			next = &t
		}
	}
	return &chartctl.AttemptResult{DeliveryID: dl.ID, Attempt: a, State: state, Next: next, Disable: disable}
}

func lastFailure(status int, err error) string {
	if err != nil {
		return err.Error()
	}
	return "HTTP " + strconv.Itoa(status)
}

// Backoff returns the wait before retry number attempt (1 after the first
// failure): uniform in [0, min(base·2^(attempt-1), 1h)) — full jitter.
func Backoff(base time.Duration, attempt int) time.Duration {
	ceil := base
	for i := 1; i < attempt && ceil < time.Hour; i++ {
		ceil *= 2
	}
	ceil = min(ceil, time.Hour)
	return time.Duration(rand.Int64N(int64(ceil)) + 1)
}

// send POSTs the event and returns the status and the start of the body.
func (d *Dispatcher) send(ctx context.Context, w *chartctl.Webhook, e *chartctl.Event) (int, string, error) {
	secret, err := d.secrets.Open(w.Secret)
	if err != nil {
		d.opts.Logger.Error("open webhook secret", "webhook", w.ID, "err", err)
		return 0, "", errors.New("could not sign the delivery: the server cannot read the webhook's secret (set a new secret)")
	}
	body, err := Body(e, d.opts.BaseURL)
	if err != nil {
		d.opts.Logger.Error("render webhook event", "webhook", w.ID, "event", e.ID, "err", err)
		return 0, "", errors.New("could not render the event")
	}
	now := d.opts.Now()
	sig, err := Sign(string(secret), e.ID, now, body)
	if err != nil {
		d.opts.Logger.Error("sign webhook delivery", "webhook", w.ID, "err", err)
		return 0, "", errors.New("could not sign the delivery: the webhook's secret is not valid (set a new secret)")
	}
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return 0, "", errors.New("the webhook's url is not valid (set a new url)")
	}
	req.Header.Set("Content-Type", "application/cloudevents+json")
	req.Header.Set("User-Agent", "chartctl-webhooks")
	req.Header.Set("webhook-id", e.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := d.client.Do(req)
	if err != nil {
		// Said for the webhook's owner: what failed, without the
		// server's resolver, addresses or Go's error chain.
		return 0, "", errors.New(neterr.Describe(req.URL.Host, err))
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, excerptSize))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	for !utf8.Valid(b) && len(b) > 0 {
		b = b[:len(b)-1]
	}
	return resp.StatusCode, string(b), nil
}
