// Package mirror keeps mirror repositories (CONTRACT §14) in step with
// their upstream Helm repositories: it reads each upstream's index.yaml
// with the importer's Helm source (internal/importer), downloads the
// versions the mirror lacks and stores them through the application layer
// (internal/app), with the validation, audit entries and chart.pushed
// events of any other upload, keeping each version's created time and
// provenance file.
//
// A Syncer runs in `chartctl serve`: it syncs each mirror every interval,
// and at once when one is created, changed or a sync is asked for. Every
// sync holds a lease (chartctl.LeaseStore) on its mirror, so replicas of a
// scaled-out server sync each mirror one at a time. Connections to
// upstreams go through netguard's dialer: loopback, private and
// link-local addresses are refused when connecting, unless the server
// allows them.
//
// Versions an upstream no longer lists stay in the mirror, as Harbor's
// and Artifactory's remote repositories keep them: a mirror is a copy
// that outlives what it copies (docs/mirrors.md).
package mirror

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/importer"
	"github.com/chartctl/chartctl/internal/netguard"
)

// FlagUpstreamIndexMaxSize is the server flag that sets
// Options.MaxIndexSize, named by the error of a sync whose upstream index
// is larger.
const FlagUpstreamIndexMaxSize = "--upstream-index-max-size"

// ErrBusy is returned by Sync when another replica (or goroutine) holds
// the mirror's lease: it is syncing the mirror now.
var ErrBusy = errors.New("another replica is syncing this mirror")

// Opener decrypts stored mirror passwords (a *secrets.Box).
type Opener interface {
	Open(sealed []byte) ([]byte, error)
}

// Options configure a Syncer.
type Options struct {
	// Allow is the loopback, private and link-local upstreams syncs may
	// reach (--allow-private-upstreams: all, or a CIDR list).
	Allow netguard.Allowance
	// Poll is how often Run looks for mirrors whose sync is due (default
	// 30s; intervals are at least chartctl.MinMirrorInterval).
	Poll time.Duration
	// Timeout bounds connecting, the TLS handshake and the wait for an
	// answer's headers (default 30s).
	Timeout time.Duration
	// FileTimeout bounds reading the index or one archive (default 10m).
	FileTimeout time.Duration
	// MaxIndexSize is the largest upstream index read (default
	// importer.DefaultMaxIndexSize, --upstream-index-max-size); a larger
	// one fails the sync, saying so.
	MaxIndexSize int64
	// LeaseTTL is how long a sync's lease lasts unless renewed (default
	// 2m); it is renewed at a third of that while the sync runs, so a
	// replica that dies mid-sync holds the mirror up for at most this.
	LeaseTTL time.Duration
	// OCIPageSize asks oci:// upstreams for tag and catalog pages of that
	// many entries (0: the registry's default); tests set it to follow the
	// Link pages.
	OCIPageSize int
	// Holder names this process in leases (default: the application
	// layer's Replica).
	Holder string
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Syncer syncs mirror repositories. Create it with New; start Run.
type Syncer struct {
	app     *app.App
	secrets Opener
	opts    Options
	client  *http.Client
	wake    chan struct{}

	mu      sync.Mutex
	pending map[string]bool
}

// New returns a Syncer storing through a, opening mirror passwords with
// secrets (nil: mirrors with a password fail to sync, saying why).
func New(a *app.App, secrets Opener, opts Options) *Syncer {
	if opts.Poll <= 0 {
		opts.Poll = 30 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.FileTimeout <= 0 {
		opts.FileTimeout = 10 * time.Minute
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = 2 * time.Minute
	}
	if opts.Holder == "" {
		opts.Holder = a.Replica
	}
	if opts.Holder == "" {
		opts.Holder = "mirror-" + rand.Text()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Syncer{app: a, secrets: secrets, opts: opts, client: NewClient(opts.Allow, opts.Timeout),
		wake: make(chan struct{}, 1), pending: map[string]bool{}}
}

// NewClient returns the HTTP client syncs use: every connection's address
// is checked after name resolution (netguard), so DNS rebinding cannot
// reach an internal address; redirects are followed (static repositories
// often redirect to object storage), each through the same check, and
// credentials are not sent to another host. No proxy is used: a proxy
// would make every upstream look like the proxy's address.
func NewClient(allow netguard.Allowance, timeout time.Duration) *http.Client {
	tr := netguard.TransportAllowing(timeout, allow, app.FlagAllowPrivateUpstreams)
	tr.ForceAttemptHTTP2 = true
	return &http.Client{Transport: tr}
}

// Request asks for a sync of the mirror repo as soon as possible, whether
// or not one is due (the app calls it through App.WakeMirror).
func (s *Syncer) Request(repo string) {
	s.mu.Lock()
	s.pending[repo] = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run syncs mirrors until ctx is done: those asked for (Request), those
// whose status says syncing (asked for on another replica, or cut short
// by a restart) and those whose interval has passed since their last
// sync. Syncs run one after another.
func (s *Syncer) Run(ctx context.Context) {
	t := time.NewTicker(s.opts.Poll)
	defer t.Stop()
	for {
		s.RunDue(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
	}
}

// RunDue syncs, once, every mirror that is due now or was asked for.
func (s *Syncer) RunDue(ctx context.Context) {
	s.mu.Lock()
	asked := s.pending
	s.pending = map[string]bool{}
	s.mu.Unlock()
	repos, err := s.app.Store.Repositories(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.opts.Logger.Error("list mirrors", "err", err)
		}
		return
	}
	now := s.opts.Now()
	for _, r := range repos {
		if ctx.Err() != nil {
			return
		}
		if r.Mirror == nil || !(asked[r.Name] || r.Mirror.Due(now)) {
			continue
		}
		if _, err := s.Sync(ctx, r.Name); err != nil && !errors.Is(err, ErrBusy) && ctx.Err() == nil {
			s.opts.Logger.Warn("mirror sync failed", "repository", r.Name, "upstream", r.Mirror.URL, "err", err)
		}
	}
}

// Result is what one sync did.
type Result struct {
	// Added lists the versions copied, as "name version".
	Added []string
	// Failed lists the versions that could not be copied, each with why.
	Failed []string
}

// Sync syncs the mirror repository name now and returns what it did: it
// takes the mirror's lease (ErrBusy when another holder has it), records
// the status syncing, copies every version the upstream lists that the
// mirror lacks, and records ok with the time, or error with why. The
// error returned is the sync's failure, also recorded in the status; a
// failed sync leaves every version stored before in place.
func (s *Syncer) Sync(ctx context.Context, name string) (*Result, error) {
	store := s.app.Store
	lease := "mirror:" + name
	ok, err := store.AcquireLease(ctx, lease, s.opts.Holder, s.opts.LeaseTTL)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrBusy
	}
	defer func() { _ = store.ReleaseLease(context.WithoutCancel(ctx), lease, s.opts.Holder) }()
	sctx, cancel := context.WithCancelCause(ctx)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		s.renew(sctx, lease, cancel)
	}()
	defer func() { cancel(nil); <-renewed }()

	// Read under the lease: the state a sync that just ended wrote.
	r, err := store.Repository(sctx, name)
	if err != nil {
		return nil, err
	}
	if r.Mirror == nil {
		return nil, fmt.Errorf("repository %q is not a mirror", name)
	}
	st := r.Mirror.MirrorState
	st.Status, st.Error = chartctl.MirrorSyncing, ""
	if err := s.setState(sctx, r, st); err != nil {
		return nil, err
	}
	res, syncErr := s.copy(sctx, r)
	if cause := context.Cause(sctx); syncErr != nil && cause != nil && ctx.Err() == nil {
		syncErr = cause // the lease was lost
	}
	now := s.opts.Now().UTC()
	st.LastAttemptAt = &now
	if syncErr == nil {
		st.Status, st.LastSyncAt = chartctl.MirrorOK, &now
	} else {
		st.Status, st.Error = chartctl.MirrorError, limit(syncErr.Error(), 2000)
	}
	// The outcome is recorded even when ctx ended (a shutdown): the next
	// start then finds error, not a sync that seems to run forever.
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer wcancel()
	if err := s.setState(wctx, r, st); err != nil {
		s.opts.Logger.Error("record mirror state", "repository", name, "err", err)
	}
	if syncErr == nil && len(res.Added) > 0 {
		s.opts.Logger.Info("mirror synced", "repository", name, "upstream", r.Mirror.URL, "added", len(res.Added))
	}
	return res, syncErr
}

// renew keeps the lease while ctx lasts; losing it cancels the sync.
func (s *Syncer) renew(ctx context.Context, lease string, cancel context.CancelCauseFunc) {
	t := time.NewTicker(s.opts.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ok, err := s.app.Store.AcquireLease(ctx, lease, s.opts.Holder, s.opts.LeaseTTL)
		if ctx.Err() != nil {
			return
		}
		if err != nil || !ok {
			cancel(errors.New("the sync lost its lease (the database was unreachable, or the sync stalled) and stopped; the next sync goes on from here"))
			return
		}
	}
}

func (s *Syncer) setState(ctx context.Context, r *chartctl.Repository, st chartctl.MirrorState) error {
	err := s.app.Store.SetMirrorState(ctx, r.Name, r.ID, st)
	// Readers of the repository (the API, the dashboard) see it at once.
	s.app.ForgetRepository(r.Name)
	return err
}

// copy copies the versions r's upstream lists and r lacks.
func (s *Syncer) copy(ctx context.Context, r *chartctl.Repository) (*Result, error) {
	res := &Result{Added: []string{}, Failed: []string{}}
	m := r.Mirror
	auth := importer.Auth{Username: m.Username}
	if m.Password != nil {
		if s.secrets == nil {
			return res, errors.New("the server has no secrets key to open the upstream's password with")
		}
		pw, err := s.secrets.Open(m.Password)
		if err != nil {
			return res, fmt.Errorf("the upstream's password cannot be read: %w", err)
		}
		auth.Password = string(pw)
	}
	var (
		versions []*importer.Version
		err      error
	)
	ictx, cancel := context.WithTimeout(ctx, s.opts.FileTimeout)
	if strings.HasPrefix(m.URL, "oci://") {
		versions, err = s.ociVersions(ictx, m.URL, auth)
	} else {
		var src *importer.HelmSource
		if src, err = importer.NewHelmSource(m.URL, auth, s.client); err != nil {
			cancel()
			return res, err
		}
		src.AuthHint = "check the mirror's username and password (PATCH /v1/repositories/" + r.Name + " sets new ones)"
		src.MaxIndexSize, src.MaxIndexSizeFlag = s.opts.MaxIndexSize, "the server's "+FlagUpstreamIndexMaxSize
		versions, err = src.Versions(ictx)
	}
	cancel()
	if err != nil {
		return res, connectError(err)
	}
	held, err := s.app.Store.IndexEntries(ctx, r.Name)
	if err != nil {
		return res, err
	}
	have := map[string]bool{}
	for _, cv := range held {
		have[cv.Name+"\x00"+cv.Version] = true
	}
	// Oldest first per chart, so an interrupted sync leaves each chart's
	// history without gaps in time.
	sort.SliceStable(versions, func(i, j int) bool {
		a, b := versions[i], versions[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if !a.Created.Equal(b.Created) {
			return a.Created.Before(b.Created)
		}
		return a.Version < b.Version
	})
	actx := chartctl.WithActor(ctx, &chartctl.Actor{CredentialKind: chartctl.CredentialMirror})
	for _, v := range versions {
		if have[v.Name+"\x00"+v.Version] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		what := v.Name + " " + v.Version
		if err := s.copyOne(actx, r, v); err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			res.Failed = append(res.Failed, what+": "+connectError(err).Error())
			continue
		}
		have[v.Name+"\x00"+v.Version] = true
		res.Added = append(res.Added, what)
	}
	if len(res.Failed) > 0 {
		return res, failure(res)
	}
	return res, nil
}

// failure says which versions could not be copied, the first few with
// why.
func failure(res *Result) error {
	const shown = 3
	msg := fmt.Sprintf("%d of %d new versions could not be copied: ", len(res.Failed), len(res.Failed)+len(res.Added))
	list := res.Failed
	if len(list) > shown {
		list = list[:shown]
	}
	msg += strings.Join(list, "; ")
	if n := len(res.Failed) - shown; n > 0 {
		msg += fmt.Sprintf("; and %d more", n)
	}
	return errors.New(msg)
}

// copyOne downloads one version (and its provenance file, if the upstream
// has one) into a new upload, checks it is what the index announces, and
// stores it in r.
func (s *Syncer) copyOne(ctx context.Context, r *chartctl.Repository, v *importer.Version) error {
	fctx, cancel := context.WithTimeout(ctx, s.opts.FileTimeout)
	defer cancel()
	rc, err := v.Open(fctx)
	if err != nil {
		return err
	}
	h := sha256.New()
	u, err := s.app.ReceiveArchive(fctx, io.TeeReader(rc, h))
	rc.Close()
	if err != nil {
		return s.refusal(r, err)
	}
	if want := strings.TrimPrefix(strings.ToLower(v.Digest), "sha256:"); want != "" {
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			return s.app.Reject(u, fmt.Errorf("the archive's sha256 is %s but the index announces %s", got, want))
		}
	}
	if u.Chart.Name != v.Name || u.Chart.Version != v.Version {
		return s.app.Reject(u, fmt.Errorf("the archive holds %s %s, not the version the index lists", u.Chart.Name, u.Chart.Version))
	}
	prc, err := v.OpenProv(fctx)
	switch {
	case errors.Is(err, importer.ErrNotFound):
	case err != nil:
		return s.app.Reject(u, fmt.Errorf("provenance file: %w", err))
	default:
		err := s.app.ReceiveProv(fctx, u, prc)
		prc.Close()
		if err != nil {
			return s.app.Reject(u, s.refusal(r, err))
		}
	}
	if _, _, err := s.app.PutMirrored(ctx, r, u, v.Created); err != nil {
		return s.refusal(r, err)
	}
	return nil
}

// refusal turns an error of the application layer into what the
// mirror's status says: a person's message for a refused archive (not a
// chart, too large, over quota…); for a failure of this server's own
// storage only that, its details going to the log.
func (s *Syncer) refusal(r *chartctl.Repository, err error) error {
	var ce *chartctl.Error
	if errors.As(err, &ce) && ce.Code != chartctl.EINTERNAL {
		return errors.New(strings.TrimSuffix(ce.Message, "."))
	}
	s.opts.Logger.Error("store a mirrored chart", "repository", r.Name, "err", err)
	return errors.New("this server could not store it (see its log)")
}

func limit(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
