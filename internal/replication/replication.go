// Package replication keeps replication targets in step with their source
// repositories (CONTRACT §18 "Federation", decision 17), as Harbor's
// replication does: a consumer of the events outbox. The store queues a
// task for each event a replication asks for, in the transaction that
// writes the event (chartctl.ReplicationStore); a Replicator claims the
// head task of each replication's queue under a lease, so replicas of a
// scaled-out server run each task once and a delete never overtakes its
// push, and runs it:
//
//   - to an oci://HOST/PATH target (CNCF Distribution, Harbor, GHCR,
//     another chartctl): the chart version's OCI manifest exactly as this
//     server serves it (the one pushed over OCI, else the derived one,
//     whose layers are the archive and the provenance file), its blobs,
//     and the manifests that refer to it (signatures, SBOMs), through
//     internal/ociclient;
//   - to a chartctl https://HOST/helm/REPO: the archive and its .prov
//     through the ChartMuseum API (POST /helm/api/REPO/charts, DELETE
//     /helm/api/REPO/charts/NAME/VERSION).
//
// A failed task is retried with exponential backoff and full jitter, for
// up to a day, then given up (it shows as failed in the status). Every
// connection goes through netguard: private addresses are refused unless
// the operator allowed them, at connect time and for every redirect.
package replication

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/debounce"
	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/ociclient"
)

// Opener decrypts stored target passwords (a *secrets.Box).
type Opener interface {
	Open(sealed []byte) ([]byte, error)
}

// Artifacts gives the OCI form of a chart version as this server's
// registry serves it: its manifest, its config when the manifest is
// derived (nil when the config is a stored blob), and the manifests that
// refer to it. The OCI registry (internal/registry) implements it.
type Artifacts interface {
	ChartArtifact(ctx context.Context, cv *chartctl.ChartVersion) (manifest *chartctl.OCIManifest, config []byte, referrers []*chartctl.OCIManifest, err error)
}

// Options configure a Replicator.
type Options struct {
	// Allow is the loopback, private and link-local targets replication
	// may reach (--allow-private-upstreams: all, or a CIDR list).
	Allow netguard.Allowance
	// PlainHTTP lists the HOST:PORT of targets reached over plain http
	// (--plain-http-upstreams).
	PlainHTTP []string
	// Transport, when set, carries every request (tests); by default
	// netguard.Upstream with Timeout.
	Transport http.RoundTripper
	// Timeout bounds connecting and each answer's headers (default 10s).
	Timeout time.Duration
	// Poll is how often Run looks for due tasks without being woken
	// (default 5s).
	Poll time.Duration
	// Gather is how long Run waits after a wake-up before it looks, so
	// that a burst of pushes is one look for tasks, not one each
	// (default 50ms, as the webhook dispatcher's; negative: none).
	Gather time.Duration
	// RetryBase is the first retry's backoff (default 5s), doubled per
	// attempt up to an hour, with full jitter; GiveUpAfter is how long a
	// task is retried (default 24h).
	RetryBase, GiveUpAfter time.Duration
	// Lease is how long a claimed task is kept from other replicas
	// (default 1m). It is renewed every third of it while the copies
	// run, so a copy may take longer, while the claim of a replica that
	// died (or of a server killed and started again) lapses within it.
	Lease  time.Duration
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Replicator runs replication tasks. Create it with New; start Run.
type Replicator struct {
	app       *app.App
	secrets   Opener
	artifacts Artifacts
	opts      Options
	http      *http.Client
	wake      chan struct{}
}

// New returns a Replicator reading through a, opening target passwords
// with secrets, taking OCI forms from artifacts.
func New(a *app.App, secrets Opener, artifacts Artifacts, opts Options) *Replicator {
	if opts.Timeout <= 0 {
		opts.Timeout = ociclient.DefaultTimeout
	}
	if opts.Poll <= 0 {
		opts.Poll = 5 * time.Second
	}
	if opts.Gather == 0 {
		opts.Gather = 50 * time.Millisecond
	}
	if opts.RetryBase <= 0 {
		opts.RetryBase = 5 * time.Second
	}
	if opts.GiveUpAfter <= 0 {
		opts.GiveUpAfter = 24 * time.Hour
	}
	if opts.Lease <= 0 {
		opts.Lease = time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Transport == nil {
		opts.Transport = netguard.UpstreamAllowing(opts.Timeout, opts.Allow, app.FlagAllowPrivateUpstreams)
	}
	return &Replicator{app: a, secrets: secrets, artifacts: artifacts, opts: opts,
		http: &http.Client{Transport: opts.Transport, CheckRedirect: func(req *http.Request, via []*http.Request) error {
			// An upload is not re-sent to wherever a redirect points.
			return http.ErrUseLastResponse
		}},
		wake: make(chan struct{}, 1)}
}

// Wake asks Run to look for due tasks now (events were committed, a
// replication was created or run).
func (r *Replicator) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run runs due tasks until ctx ends.
func (r *Replicator) Run(ctx context.Context) {
	t := time.NewTicker(r.opts.Poll)
	defer t.Stop()
	for {
		for {
			n, err := r.RunOnce(ctx)
			if err != nil && ctx.Err() == nil {
				r.opts.Logger.Error("replication", "err", err)
			}
			if n == 0 || err != nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
			if !debounce.Pause(ctx, r.opts.Gather) {
				return
			}
		case <-t.C:
		}
	}
}

// RunOnce claims the due head task of each replication, runs them, and
// records how each ended; it returns how many it ran.
func (r *Replicator) RunOnce(ctx context.Context) (int, error) {
	store := r.app.Store
	tasks, err := store.ClaimReplicationTasks(ctx, r.opts.Now(), r.opts.Lease, 32)
	if err != nil || len(tasks) == 0 {
		return 0, err
	}
	reps, err := store.Replications(ctx)
	if err != nil {
		return 0, err
	}
	byID := map[string]*chartctl.Replication{}
	for _, rep := range reps {
		byID[rep.ID] = rep
	}
	var results []chartctl.ReplicationResult
	var events []*chartctl.Event
	// The claims are renewed while the copies run, and no longer once
	// their results are about to be recorded (a renewal after that would
	// put off a failed task's retry).
	stopRenewing := r.renew(ctx, tasks)
	for _, t := range tasks {
		rep := byID[t.ReplicationID]
		if rep == nil {
			continue
		}
		err := r.runTask(ctx, rep, t)
		res := chartctl.ReplicationResult{ReplicationID: rep.ID, TaskID: t.ID, At: r.opts.Now()}
		if err != nil {
			res.Error = truncate(fmt.Sprintf("%s %s %s: %v", t.Op, t.Chart, t.Version, err), 500)
			if res.At.Sub(t.CreatedAt) >= r.opts.GiveUpAfter {
				res.Failed = true
			} else {
				res.Next = res.At.Add(r.backoff(t.Attempts))
			}
			r.opts.Logger.Warn("replication task failed", "replication", rep.Name, "op", t.Op, "chart", t.Chart,
				"version", t.Version, "attempt", t.Attempts+1, "gave_up", res.Failed, "err", err)
			if res.Failed {
				events = append(events, r.failedEvent(ctx, rep, t, err))
			}
		}
		results = append(results, res)
	}
	stopRenewing()
	// The results are recorded even when ctx ended meanwhile, with the
	// replication.failed events of the tasks given up in the same
	// transaction (so a give-up is announced exactly once, whichever
	// replica ran it).
	rctx := context.WithoutCancel(ctx)
	if len(events) > 0 {
		rctx = chartctl.WithChange(rctx, &chartctl.Change{Events: events})
	}
	if err := store.RecordReplicationResults(rctx, results); err != nil {
		return 0, err
	}
	if len(events) > 0 {
		r.app.Committed()
	}
	return len(results), nil
}

// renew postpones the claimed tasks by the lease every third of it until
// the returned function is called; that function returns once no renewal
// is under way.
func (r *Replicator) renew(ctx context.Context, tasks []*chartctl.ReplicationTask) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(max(r.opts.Lease/3, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if err := r.app.Store.RenewReplicationTasks(ctx, tasks, r.opts.Now().Add(r.opts.Lease)); err != nil && ctx.Err() == nil {
					r.opts.Logger.Warn("renew the claim of replication tasks", "tasks", len(tasks), "err", err)
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// failedEvent is the replication.failed event of task t, given up: the
// replication, its target, the version and the last error, placed in the
// source repository so that its (and its organization's) webhooks get it.
func (r *Replicator) failedEvent(ctx context.Context, rep *chartctl.Replication, t *chartctl.ReplicationTask, err error) *chartctl.Event {
	org := ""
	if repo, rerr := r.app.Store.Repository(ctx, rep.Source); rerr == nil {
		org = repo.Organization
	}
	data := map[string]any{"replication": rep.Name, "source": rep.Source, "target": rep.Target, "op": string(t.Op),
		"chart": t.Chart, "version": t.Version, "attempts": t.Attempts + 1, "error": truncate(err.Error(), 500),
		"first_attempt_at": t.CreatedAt.UTC().Truncate(time.Second).Format(time.RFC3339)}
	// The server itself gave up: no user acted.
	return r.app.NewEvent(chartctl.WithActor(context.WithoutCancel(ctx), &chartctl.Actor{}), chartctl.EventReplicationFailed,
		rep.Source, org, "/v1/replications/"+url.PathEscape(rep.Name), t.Chart+"/"+t.Version, data)
}

// backoff is the wait before attempt n+1: full jitter over base·2ⁿ,
// capped at an hour.
func (r *Replicator) backoff(attempts int) time.Duration {
	d := r.opts.RetryBase
	for i := 0; i < attempts && d < time.Hour; i++ {
		d *= 2
	}
	d = min(d, time.Hour)
	n, err := rand.Int(rand.Reader, big.NewInt(int64(d)))
	if err != nil {
		return d
	}
	return time.Duration(n.Int64()) + time.Second
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// runTask copies or deletes one version at rep's target.
func (r *Replicator) runTask(ctx context.Context, rep *chartctl.Replication, t *chartctl.ReplicationTask) error {
	if !app.MatchesVersionRange(rep.Filter.Version, t.Version) {
		return nil
	}
	target, err := app.ParseReplicationTarget(rep.Target, r.opts.PlainHTTP)
	if err != nil {
		return err
	}
	password := ""
	if len(rep.Password) > 0 {
		if r.secrets == nil {
			return errors.New("the target's password cannot be opened: the server has no secrets key")
		}
		b, err := r.secrets.Open(rep.Password)
		if err != nil {
			return errors.New("the target's password cannot be opened with this server's secrets key")
		}
		password = string(b)
	}
	if t.Op == chartctl.ReplicationDelete {
		if target.OCI {
			return r.deleteOCI(ctx, target, rep.Username, password, t)
		}
		return r.deleteChartctl(ctx, target, rep.Username, password, t)
	}
	cv, err := r.app.Store.ChartVersion(ctx, rep.Source, t.Chart, t.Version)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		// Deleted since: there is nothing to copy (its deletion is a task
		// of its own when the replication replicates deletes).
		return nil
	}
	if err != nil {
		return err
	}
	if target.OCI {
		return r.pushOCI(ctx, target, rep.Username, password, cv)
	}
	return r.pushChartctl(ctx, target, rep.Username, password, cv)
}

func (r *Replicator) ociClient(target *app.ReplicationTarget, user, password string) (*ociclient.Client, error) {
	return ociclient.New(ociclient.Options{Host: target.Host, PlainHTTP: r.plain(target.Host), Username: user, Password: password,
		Transport: r.opts.Transport, Timeout: r.opts.Timeout, PrivateFlag: app.FlagAllowPrivateUpstreams})
}

func (r *Replicator) plain(host string) bool {
	for _, h := range r.opts.PlainHTTP {
		if strings.EqualFold(strings.TrimSpace(h), host) {
			return true
		}
	}
	return false
}

// pushOCI copies cv's manifest, its blobs and its referrers to the
// target's PATH/CHART, tagged as the version.
func (r *Replicator) pushOCI(ctx context.Context, target *app.ReplicationTarget, user, password string, cv *chartctl.ChartVersion) error {
	if r.artifacts == nil {
		return errors.New("this server has no OCI registry to take the chart's OCI form from")
	}
	c, err := r.ociClient(target, user, password)
	if err != nil {
		return err
	}
	m, config, refs, err := r.artifacts.ChartArtifact(ctx, cv)
	if err != nil {
		return err
	}
	repo := target.Path + "/" + cv.Name
	if err := r.pushManifest(ctx, c, repo, chartctl.VersionTag(cv.Version), m, config); err != nil {
		return err
	}
	for _, ref := range refs {
		if err := r.pushManifest(ctx, c, repo, "", ref, nil); err != nil {
			return fmt.Errorf("referrer %s: %w", ref.Digest, err)
		}
	}
	return nil
}

// pushManifest pushes the blobs m names (config from config when it
// matches, the rest from the blob store), then m itself.
func (r *Replicator) pushManifest(ctx context.Context, c *ociclient.Client, repo, tag string, m *chartctl.OCIManifest, config []byte) error {
	var doc ocispec.Manifest
	if err := json.Unmarshal(m.Content, &doc); err != nil {
		return fmt.Errorf("read manifest %s: %w", m.Digest, err)
	}
	descs := append([]ocispec.Descriptor{doc.Config}, doc.Layers...)
	for _, d := range descs {
		if d.Digest == "" {
			continue
		}
		if config != nil && d.Digest == doc.Config.Digest && digest.FromBytes(config) == d.Digest {
			if err := c.PushBlob(ctx, repo, d, bytes.NewReader(config)); err != nil {
				return err
			}
			continue
		}
		if d.Digest == ocispec.DescriptorEmptyJSON.Digest {
			if err := c.PushBlob(ctx, repo, d, bytes.NewReader(ocispec.DescriptorEmptyJSON.Data)); err != nil {
				return err
			}
			continue
		}
		b, err := r.app.Blobs.Open(ctx, d.Digest.String())
		if err != nil {
			return fmt.Errorf("blob %s: %w", d.Digest, err)
		}
		err = c.PushBlob(ctx, repo, d, b)
		_ = b.Close()
		if err != nil {
			return err
		}
	}
	mt := m.MediaType
	if mt == "" {
		mt = ocispec.MediaTypeImageManifest
	}
	_, err := c.PushManifest(ctx, repo, tag, mt, m.Content)
	return err
}

// deleteOCI deletes the version's tag and manifest at the target; one
// already gone is done.
func (r *Replicator) deleteOCI(ctx context.Context, target *app.ReplicationTarget, user, password string, t *chartctl.ReplicationTask) error {
	c, err := r.ociClient(target, user, password)
	if err != nil {
		return err
	}
	err = c.DeleteManifest(ctx, target.Path+"/"+t.Chart, chartctl.VersionTag(t.Version))
	if ociclient.IsNotFound(err) {
		return nil
	}
	return err
}

// chartmuseumURL is the target's ChartMuseum API URL, below /helm/api/REPO.
func chartmuseumURL(target *app.ReplicationTarget, rest string) string {
	return target.Scheme + "://" + target.Host + "/helm/api/" + url.PathEscape(target.Repo) + "/charts" + rest
}

// pushChartctl uploads the archive and its provenance file to a chartctl
// repository through its ChartMuseum API; a version already there (409)
// is done.
func (r *Replicator) pushChartctl(ctx context.Context, target *app.ReplicationTarget, user, password string, cv *chartctl.ChartVersion) error {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		pw.CloseWithError(r.writeParts(ctx, mw, cv))
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, chartmuseumURL(target, ""), pr)
	if err != nil {
		pr.Close()
		return err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return r.send(req, user, password, http.StatusConflict)
}

func (r *Replicator) writeParts(ctx context.Context, mw *multipart.Writer, cv *chartctl.ChartVersion) error {
	part := func(field, name, d string) error {
		b, err := r.app.Blobs.Open(ctx, d)
		if err != nil {
			return fmt.Errorf("blob %s: %w", d, err)
		}
		defer b.Close()
		w, err := mw.CreateFormFile(field, name)
		if err != nil {
			return err
		}
		_, err = io.Copy(w, b)
		return err
	}
	file := cv.Name + "-" + cv.Version + ".tgz"
	if err := part("chart", file, cv.Digest); err != nil {
		return err
	}
	if cv.ProvDigest != "" {
		if err := part("prov", file+".prov", cv.ProvDigest); err != nil {
			return err
		}
	}
	return mw.Close()
}

// deleteChartctl deletes the version at a chartctl target; one already
// gone (404) is done.
func (r *Replicator) deleteChartctl(ctx context.Context, target *app.ReplicationTarget, user, password string, t *chartctl.ReplicationTask) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, chartmuseumURL(target, "/"+url.PathEscape(t.Chart)+"/"+url.PathEscape(t.Version)), nil)
	if err != nil {
		return err
	}
	return r.send(req, user, password, http.StatusNotFound)
}

// send sends req with the credential; a 2xx answer or the status done
// means done.
func (r *Replicator) send(req *http.Request, user, password string, done int) error {
	if user != "" || password != "" {
		req.SetBasicAuth(user, password)
	}
	req.Header.Set("User-Agent", "chartctl-replication")
	resp, err := r.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 || resp.StatusCode == done {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return fmt.Errorf("%s %s answered %s: %s", req.Method, req.URL.Redacted(), resp.Status, strings.TrimSpace(string(body)))
}
