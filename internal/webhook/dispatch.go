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
	Poll   time.Duration
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

// Run delivers until ctx is done. Pending deliveries left by a previous
// run (a crash, a restart) go out first.
func (d *Dispatcher) Run(ctx context.Context) {
	for {
		n := d.RunOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if n > 0 {
			continue
		}
		t := time.NewTimer(d.opts.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-d.wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// RunOnce claims the deliveries due now, one per webhook, sends them
// concurrently and records their attempts together, in one store
// transaction once the round is over (one commit per round rather than
// one per delivery keeps the dispatcher's writes from crowding out the
// uploads that feed it; a round lasts at most Timeout). It returns how
// many it sent.
func (d *Dispatcher) RunOnce(ctx context.Context) int {
	claimed, err := d.store.ClaimDeliveries(ctx, d.opts.Now(), d.lease(), 64)
	if err != nil {
		if ctx.Err() == nil {
			d.opts.Logger.Error("claim webhook deliveries", "err", err)
		}
		return 0
	}
	results := make([]*chartctl.AttemptResult, len(claimed))
	var wg sync.WaitGroup
	for i, dl := range claimed {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = d.deliver(ctx, dl)
		}()
	}
	wg.Wait()
	var done []chartctl.AttemptResult
	for _, r := range results {
		if r != nil {
			done = append(done, *r)
		}
	}
	if err := d.store.RecordAttempts(context.WithoutCancel(ctx), done); err != nil {
		// The leases run out and the deliveries are sent again.
		d.opts.Logger.Error("record webhook deliveries", "deliveries", len(done), "err", err)
	}
	return len(claimed)
}

const excerptSize = 1024

// deliver sends one delivery and returns its attempt, nil when there is
// none to record (the webhook is gone, or the dispatcher is stopping).
func (d *Dispatcher) deliver(ctx context.Context, dl *chartctl.Delivery) *chartctl.AttemptResult {
	w, err := d.store.Webhook(ctx, dl.WebhookID)
	if err != nil {
		d.opts.Logger.Error("load webhook", "webhook", dl.WebhookID, "err", err)
		return nil
	}
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
