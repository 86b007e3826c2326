// Package app is chartctl's application layer: the one place every
// protocol (the /v1 API, the Helm repository and ChartMuseum API, the OCI
// registry, the dashboard) goes through to read or change charts and
// repositories. It makes the authorization decisions of §6 on a
// chartctl.Principal, applies the overwrite rules, commits blobs before
// the records that refer to them, keeps the Helm index current and
// collects blobs nothing refers to any more.
//
// Transports parse requests and write responses; none writes to the store
// directly for these resources.
package app

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/chartctl/chartctl/internal/admission"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartdiff"
	"github.com/chartctl/chartctl/internal/chartpage"
	"github.com/chartctl/chartctl/internal/chartsearch"
	"github.com/chartctl/chartctl/internal/helmindex"
	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/publishing"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/smallblobs"
)

// Config holds the application's tunables.
type Config struct {
	// MaxChartSize is the largest chart archive accepted, in bytes.
	MaxChartSize int64
	// IndexCacheDir, if set, is where the gzip forms of large indexes
	// are kept as files, for sendfile, with the snapshots a restart
	// serves them from (helmindex.Options.DiskDir).
	IndexCacheDir string
	// BackfillDelay is how long the start-up backfills (RunImages' pass
	// over every stored version, RunIndexJSONBackfill) wait after the
	// start, so that they do not compete with the first requests after a
	// restart; 0 starts them at once.
	BackfillDelay time.Duration
	// IndexKeepQuiet is how long a large repository's changes must pause
	// before RunIndexKeeper writes its index snapshot; 0 means
	// DefaultIndexKeepQuiet.
	IndexKeepQuiet time.Duration
	// AllowOverwrite lets a forced upload replace a stored chart version.
	AllowOverwrite bool
	// ChartLimits bound what an archive may decompress to.
	ChartLimits chart.Limits
	// BlobGrace spares unreferenced blobs committed more recently than
	// this from deletion (app/blobs.go): a delete removes older ones at
	// once and leaves younger ones to the periodic collection. 0 means
	// DefaultBlobGrace; negative means none.
	BlobGrace time.Duration
	// AllowPrivateWebhooks lets webhook URLs name private and loopback
	// addresses.
	AllowPrivateWebhooks bool
	// DefaultRepositoryQuota, if positive, is the max_bytes quota a new
	// repository starts with.
	DefaultRepositoryQuota int64
	// BlobCacheSize is the memory budget, in bytes, of the small blobs
	// downloads are served from (OpenBlob): 0 means
	// smallblobs.DefaultBudget, negative keeps no blob in memory.
	BlobCacheSize int64
	// BlobCacheMaxBlob is the largest blob kept in memory: 0 means
	// smallblobs.DefaultMaxBlob.
	BlobCacheMaxBlob int64
	// AllowPrivateUpstreams lets mirror URLs name private and loopback
	// addresses (the syncs' dialer must allow them too).
	AllowPrivateUpstreams bool
	// PrivateUpstreams says which private addresses proxy repositories
	// may reach (--allow-private-upstreams as true/false or a CIDR list).
	PrivateUpstreams netguard.Allowance
	// PlainHTTPUpstreams are the HOST:PORTs a proxy repository or a
	// replication target may be reached at over plain http
	// (--plain-http-upstreams); every other one is https or oci over https.
	PlainHTTPUpstreams []string
	// MaxKeysPerUser caps the API keys one user may hold (0: no cap).
	MaxKeysPerUser int
	// OIDCTrustInsecureIssuers are the OIDC issuers of trusted publishers
	// the operator vouches for (--oidc-trust-insecure-issuers): they may
	// be plain http and on private addresses.
	OIDCTrustInsecureIssuers []string
	// OIDCRootCAs verifies the TLS certificates of trusted publishers'
	// issuers (nil: the system's roots).
	OIDCRootCAs *x509.CertPool
	// DefaultIndexFormat is the index format of repositories created
	// without one (--index-format); "" means chartctl.IndexJSON.
	DefaultIndexFormat chartctl.IndexFormat
}

// DefaultBlobGrace is the orphan sweep's grace period when Config sets
// none.
const DefaultBlobGrace = time.Hour

// App is the application layer over a metadata store and a blob store.
// Create it with New.
type App struct {
	// Store keeps metadata; Blobs keeps chart archives and other blobs.
	Store chartctl.Store
	Blobs chartctl.BlobStore
	// Index holds each repository's rendered Helm index.
	Index *helmindex.Cache
	// Config holds the tunables.
	Config Config
	// Logger receives errors of background work.
	Logger *slog.Logger
	// Now is the clock.
	Now func() time.Time
	// ObserveUpload, if set, is told the outcome of every upload: created,
	// or the error that refused it (nil error and created=false: an
	// identical re-upload).
	ObserveUpload func(created bool, err error)
	// OnEvents, if set, is called after a change with events committed;
	// the webhook dispatcher wakes on it.
	OnEvents func()
	// OnMemberships, if set, is called after team sync changed
	// memberships (groups.go): transports drop cached credentials, whose
	// organization roles came from them.
	OnMemberships func()
	// Secrets seals webhook secrets and mirror passwords; nil disables
	// webhook creation and mirror passwords.
	Secrets Sealer
	// Proxies, if set, is the cache of proxy repositories
	// (internal/proxy): /v1 reads its counters, a purge forgets what it
	// remembers of an upstream.
	Proxies ProxyCache
	// WakeReplication, if set, is called when replication tasks were
	// queued by a replication's creation or run (events queue theirs
	// through OnEvents); the replicator (internal/replication) wakes on it.
	WakeReplication func()
	// WakeMirror, if set, is called with a mirror repository's name when
	// a sync of it is wanted now (it was created, or a sync was asked
	// for); the mirror syncer (internal/mirror) wakes on it.
	WakeMirror func(repo string)
	// Pages keeps each chart version's rendered web page: rendered when a
	// version is stored, forgotten when its archive's blob is deleted.
	Pages *chartpage.Store
	// Replica names this process among the replicas sharing the store:
	// the holder of the leases it takes (chartctl.LeaseStore).
	Replica string
	// Limits holds the rate-limit buckets of §7 the application charges
	// itself (BucketKeys), so every transport is charged alike; nil
	// charges nothing. The server sets its own limiter here.
	Limits ratelimit.Limiter
	// OAuth keeps OAuth grants and browser sessions (set by New when the
	// store keeps them too): the account functions of credentials.go
	// read and end them.
	OAuth chartctl.OAuthStore

	// Tokens verifies the OIDC tokens of trusted publishers
	// (/v1/oidc/token); New sets one from Config.
	Tokens *publishing.Verifier

	// Trust configures signature verification (trust.go).
	Trust Trust
	// OnVerified, if set, is called after every (re)computation of a
	// chart version's verification record (VerifyVersion), stored or not:
	// the admission policy releases held versions from it.
	OnVerified func(ctx context.Context, repoID string, chart, version string, v chartctl.Verification)
	// ChartManifestDigests, if set, returns the digests of a chart
	// version's OCI manifests (the stored or derived one, and an
	// alternate, CONTRACT §18 decision 10); the OCI registry sets it,
	// since it derives manifests. Unset, only a stored manifest counts.
	ChartManifestDigests func(ctx context.Context, cv *chartctl.ChartVersion) ([]string, error)
	// Lint lints chart archives for admission policies with lint set
	// (decision 9: the composition root bounds it in a child process).
	// Nil refuses charts under such a policy with an internal error.
	Lint admission.Linter
	// Render renders chart archives with their default values, for the
	// images of charts without the artifacthub.io/images annotation and
	// the rendered manifests of diffs (decision 9: the composition root
	// bounds it in a child process). Nil leaves such versions pending and
	// diffs without rendered manifests.
	Render chartdiff.Renderer
	// SignatureStatus verifies the signatures that came with an upload
	// (its provenance file; prov is nil when none) against the trust
	// material of repository r, for require_signature, before anything is
	// stored. New sets it to VerifyUpload; tests may replace it. Nil
	// counts every upload as unsigned.
	SignatureStatus func(ctx context.Context, r *chartctl.Repository, chart, version string, archive, prov []byte) (chartctl.PolicyVerification, error)

	// noAudit: see DisableAuditForBenchmark.
	noAudit bool

	blobCache *smallblobs.Cache
	repoList  listCache
	downloads downloadCounter
	repos     recordCache[string, chartctl.Repository]
	versions  recordCache[versionKey, chartctl.ChartVersion]
	search    recordCache[string, []*chartsearch.Candidate]
	diffs     diffCache
	hold      blobHold
	watchers  watchers
	reverify  reverify
	images    imagesJob
	recheck   recheck
	// claimReleases: see ReleaseLater.
	claimReleases claimReleases
	// fresh: see NoteCommitted.
	fresh freshBlobs
	// freshLinks remembers the OCI blob links this process committed
	// (NoteLinked), keyed name@digest.
	freshLinks freshBlobs
	keeper     indexKeeper
}

// Options configures New.
type Options struct {
	Config Config
	Logger *slog.Logger
	Now    func() time.Time
	// ObserveRender, if set, is told how long each index render took.
	ObserveRender func(time.Duration)
	// ObserveUpload: see App.ObserveUpload.
	ObserveUpload func(created bool, err error)
}

// New returns the application layer over store and blobs.
func New(store chartctl.Store, blobs chartctl.BlobStore, opts Options) *App {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	a := &App{Store: store, Blobs: blobs, Config: opts.Config, Logger: opts.Logger, Now: opts.Now, ObserveUpload: opts.ObserveUpload,
		Replica: replicaName()}
	a.search.ttl = searchTTL
	a.keeper.wake = make(chan struct{}, 1)
	if o, ok := store.(chartctl.OAuthStore); ok {
		a.OAuth = o
	}
	budget, maxBlob := opts.Config.BlobCacheSize, opts.Config.BlobCacheMaxBlob
	if budget == 0 {
		budget = smallblobs.DefaultBudget
	}
	if maxBlob == 0 {
		maxBlob = smallblobs.DefaultMaxBlob
	}
	a.blobCache = smallblobs.New(budget, maxBlob)
	a.Tokens = publishing.New(publishing.Config{InsecureIssuers: opts.Config.OIDCTrustInsecureIssuers,
		AllowPrivate: opts.Config.AllowPrivateUpstreams, RootCAs: opts.Config.OIDCRootCAs, Now: opts.Now})
	a.Pages = chartpage.New(chartpage.Options{Blobs: blobReader{a}, Backend: chartpage.BackendFor(store), Limits: opts.Config.ChartLimits, Logger: opts.Logger})
	a.Index = helmindex.New(func(ctx context.Context, repo string) ([]*chartctl.ChartVersion, error) {
		return store.IndexEntries(ctx, repo)
	}, helmindex.Options{ContextPath: "/helm", LoadVersion: store.IndexEntry, Observe: opts.ObserveRender,
		DiskDir: opts.Config.IndexCacheDir, Generation: store.IndexGeneration})
	a.SignatureStatus = a.VerifyUpload
	return a
}

func (a *App) observeUpload(created bool, err error) {
	if a.ObserveUpload != nil {
		a.ObserveUpload(created, err)
	}
}

// RefreshIndexVersion makes the in-memory Helm index entry of one chart
// version match the store: another replica changed it.
func (a *App) RefreshIndexVersion(ctx context.Context, repo, name, version string) {
	a.versions.forget(versionKey{repo, name, version})
	a.versionChanged(ctx, repo, name, version)
}

// InvalidateIndex forgets the in-memory Helm index of repo (another
// replica changed it in ways not known one by one, or deleted it); the
// next request loads it from the store.
func (a *App) InvalidateIndex(repo string) {
	a.ForgetRepository(repo)
	a.repositoryChanged(repo)
}

// replicaName is "host/pid/random": unique among the processes sharing a
// store, and readable in the leases table.
func replicaName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "chartctl"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}
