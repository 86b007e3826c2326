package webhook

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/chartctl/chartctl/internal/chartctl"
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
}

// Dispatcher sends queued deliveries. Create it with New and start Run.
type Dispatcher struct {
	store   chartctl.Store
	secrets Opener
	opts    Options
	client  *http.Client
	wake    chan struct{}
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
func (d *Dispatcher) Run(ctx context.Context) {
	for {
		n := d.RunOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if n > 0 {
			// More may be due behind what this round sent.
			continue
		}
		t := time.NewTimer(d.opts.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-d.wake:
			t.Stop()
			if d.opts.Gather > 0 {
				g := time.NewTimer(d.opts.Gather)
				select {
				case <-ctx.Done():
					g.Stop()
					return
				case <-g.C:
				}
			}
		case <-t.C:
		}
	}
}

// RunOnce claims the deliveries due now — the head of each webhook's
// queue — and sends them: the webhooks concurrently, each webhook's in
// order, stopping at its first failure (the rest go back to the queue
// unsent, behind it). It records every attempt of the round in one store
// transaction once the round is over: one claim and one commit per round,
// not one per delivery, keeps the dispatcher's writes from crowding out
// the changes that feed it. A webhook's deliveries take at most
// perWebhook·Timeout. It returns how many deliveries it sent.
func (d *Dispatcher) RunOnce(ctx context.Context) int {
	claimed, err := d.store.ClaimDeliveries(ctx, d.opts.Now(), d.lease(), perWebhook, roundLimit)
	if err != nil {
		if ctx.Err() == nil {
			d.opts.Logger.Error("claim webhook deliveries", "err", err)
		}
		return 0
	}
	var queues [][]*chartctl.Delivery
	for i, dl := range claimed {
		if i == 0 || dl.WebhookID != claimed[i-1].WebhookID {
			queues = append(queues, nil)
		}
		queues[len(queues)-1] = append(queues[len(queues)-1], dl)
	}
	results := make([][]chartctl.AttemptResult, len(queues))
	var wg sync.WaitGroup
	for i, q := range queues {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = d.deliverQueue(ctx, q)
		}()
	}
	wg.Wait()
	var done []chartctl.AttemptResult
	for _, r := range results {
		done = append(done, r...)
	}
	if err := d.store.RecordAttempts(context.WithoutCancel(ctx), done); err != nil {
		// The leases run out and the deliveries are sent again.
		d.opts.Logger.Error("record webhook deliveries", "deliveries", len(done), "err", err)
	}
	return len(claimed)
}

// deliverQueue sends one webhook's claimed deliveries in order until one
// fails; those after it are returned unsent, due again at once (behind
// the failed one, which the store's claims do not pass).
func (d *Dispatcher) deliverQueue(ctx context.Context, q []*chartctl.Delivery) []chartctl.AttemptResult {
	w, err := d.store.Webhook(ctx, q[0].WebhookID)
	if err != nil {
		d.opts.Logger.Error("load webhook", "webhook", q[0].WebhookID, "err", err)
		return nil
	}
	var out []chartctl.AttemptResult
	for i, dl := range q {
		r := d.deliver(ctx, w, dl)
		if r == nil {
			return out // stopping: the leases run out
		}
		out = append(out, *r)
		if r.State != chartctl.DeliveryDelivered {
			now := d.opts.Now()
			for _, rest := range q[i+1:] {
				out = append(out, chartctl.AttemptResult{DeliveryID: rest.ID, Unsent: true, State: chartctl.DeliveryPending, Next: &now})
			}
			return out
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
		return 0, "", err
	}
	body, err := Body(e, d.opts.BaseURL)
	if err != nil {
		return 0, "", err
	}
	now := d.opts.Now()
	sig, err := Sign(string(secret), e.ID, now, body)
	if err != nil {
		return 0, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/cloudevents+json")
	req.Header.Set("User-Agent", "chartctl-webhooks")
	req.Header.Set("webhook-id", e.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, excerptSize))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	for !utf8.Valid(b) && len(b) > 0 {
		b = b[:len(b)-1]
	}
	return resp.StatusCode, string(b), nil
}
