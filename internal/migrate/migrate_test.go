package migrate_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/dump"
	"github.com/chartctl/chartctl/internal/migrate"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/s3blob"
	"github.com/chartctl/chartctl/internal/testkit/enginetest"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/internal/testkit/s3test"
)

func TestMain(m *testing.M) { os.Exit(enginetest.Main(m)) }

var ctx = context.Background()

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func putBlob(t *testing.T, s chartctl.AlgorithmBlobStore, alg, data string) string {
	t.Helper()
	w, err := s.CreateAlgorithm(ctx, alg)
	must(t, err)
	defer w.Abort()
	_, err = w.Write([]byte(data))
	must(t, err)
	d, err := w.Commit()
	must(t, err)
	return d
}

// cancelAfter cancels a context once the progress output shows n blobs
// copied: an interruption in the middle of a migration.
type cancelAfter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if strings.Contains(c.buf.String(), c.marker) {
		c.cancel()
	}
	return len(p), nil
}

// TestMigrate populates a single-node data directory, migrates it to a
// real PostgreSQL and versitygw, interrupted in the middle of the blobs
// and resumed, and checks that everything arrived and that a third run
// refuses the target, which holds data now.
func TestMigrate(t *testing.T) {
	dir := t.TempDir()
	src, err := bolt.Open(filepath.Join(dir, "chartctl.db"))
	must(t, err)
	defer src.Close()
	srcBlobs, err := blob.Open(filepath.Join(dir, "blobs"))
	must(t, err)

	ada := &chartctl.User{Email: "ada@example.com", Admin: true, PasswordHash: "argon2id$x"}
	must(t, src.CreateUser(ctx, ada))
	bob := &chartctl.User{Email: "bob@example.com", Disabled: true}
	must(t, src.CreateUser(ctx, bob))
	must(t, src.CreateAPIKey(ctx, &chartctl.APIKey{UserID: ada.ID, Name: "ci", Hash: []byte("keyhash"), Scopes: chartctl.Scopes{chartctl.ScopeRepoRead}}))
	must(t, src.CreateOAuthClient(ctx, &chartctl.OAuthClient{ID: "cli", Name: "CLI", Public: true, RedirectURIs: []string{"http://127.0.0.1/cb"}}))
	must(t, src.CreateOrganization(ctx, &chartctl.Organization{Name: "acme", CreatedBy: ada.ID}))
	must(t, src.CreateTeam(ctx, &chartctl.Team{Name: "devs", Organization: "acme"}))
	must(t, src.AddMember(ctx, &chartctl.Member{Team: "devs", Email: "bob@example.com", Role: chartctl.RoleMember}))
	repo := &chartctl.Repository{Name: "charts", Organization: "acme", OwnerID: ada.ID, Visibility: chartctl.VisibilityPublic}
	must(t, src.CreateRepository(ctx, repo))
	var digests []string
	for i, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		d := putBlob(t, srcBlobs, "sha256", "archive "+v)
		digests = append(digests, d)
		cv := &chartctl.ChartVersion{Repository: "charts", Name: "web", Version: v, Digest: d, Size: int64(8 + i),
			IndexEntry: []byte("  - name: web\n    version: " + v + "\n")}
		if i == 0 {
			cv.ProvDigest = putBlob(t, srcBlobs, "sha256", "prov "+v)
		}
		_, _, _, err := src.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{})
		must(t, err)
	}
	layer := putBlob(t, srcBlobs, "sha512", "oci layer")
	must(t, src.LinkBlob(ctx, "charts/app", layer, 9))
	must(t, src.LinkBlob(ctx, "charts/app", digests[2], 10))
	mf := &chartctl.OCIManifest{Name: "charts/app", Digest: "sha256:" + strings.Repeat("a", 64), MediaType: "application/vnd.oci.image.manifest.v1+json",
		Blobs: []string{layer, digests[2]}, Content: []byte(`{"m":1}`), Chart: &chartctl.OCIChartRef{Repository: "charts", Name: "web", Version: "2.0.0"}}
	must(t, src.PutManifest(ctx, mf, "2.0.0"))
	sig := &chartctl.OCIManifest{Name: "charts/app", Digest: "sha256:" + strings.Repeat("b", 64), MediaType: "application/vnd.oci.image.manifest.v1+json",
		Subject: mf.Digest, ArtifactType: "application/vnd.sig", Content: []byte(`{"sig":1}`)}
	must(t, src.PutManifest(ctx, sig, ""))
	// What issue #18 added: a quota the source already exceeds (it must
	// not refuse the copied charts), a retention policy, webhooks of each
	// scope, download counters and the audit log.
	two := int64(2)
	must(t, src.SetQuota(ctx, chartctl.QuotaRepository, "charts", chartctl.Quota{MaxVersions: &two}))
	keep := 5
	must(t, src.SetRetentionPolicy(ctx, "charts", &chartctl.RetentionPolicy{KeepLatest: &keep}))
	hooks := []*chartctl.Webhook{
		{URL: "https://all.example.com", Events: []string{"*"}, Active: true, Secret: []byte("sealed-1")},
		{Organization: "acme", URL: "https://org.example.com", Events: []string{"chart.pushed"}, Active: true, Secret: []byte("sealed-2")},
		{Repository: "charts", URL: "https://repo.example.com", Events: []string{"*"}, Active: false, Secret: []byte("sealed-3"), DisabledReason: "gone"},
	}
	for _, w := range hooks {
		must(t, src.CreateWebhook(ctx, w))
	}
	lastDownload := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	must(t, src.AddDownloads(ctx, []chartctl.DownloadCount{{Repository: "charts", Name: "web", Version: "1.1.0", Count: 7, Last: lastDownload}}))
	for i, action := range []string{"repository.create", "chart.push", "session.signin"} {
		must(t, src.AppendAudit(ctx, &chartctl.AuditEntry{Time: lastDownload.Add(time.Duration(i) * time.Minute), Action: action,
			Outcome: chartctl.OutcomeSuccess, Actor: chartctl.Actor{Email: "ada@example.com"}}))
	}

	dst, err := postgres.Open(ctx, pgtest.NewDatabase(t))
	must(t, err)
	defer dst.Close()
	dstBlobs, err := s3blob.Open(ctx, s3test.NewBucket(t))
	must(t, err)
	run := func(c context.Context, progress *cancelAfter) (*migrate.Summary, error) {
		m := &migrate.Migration{Src: src, SrcBlobs: srcBlobs, Dst: dst, DstBlobs: dstBlobs,
			Transaction: func(ctx context.Context, fn func(dump.Target) error) error {
				return dst.Import(ctx, func(tx *postgres.DB) error { return fn(tx) })
			}}
		if progress != nil {
			m.Progress = progress
		}
		return m.Run(c)
	}

	// Interrupted after two blobs.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	_, err = run(cctx, &cancelAfter{marker: "2/5", cancel: cancel})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	// Resumed: copies the rest.
	sum, err := run(ctx, nil)
	must(t, err)
	r := sum.Records
	if sum.Blobs != 5 || sum.BlobsCopied == 0 || sum.BlobsCopied == 5 || r["user"] != 2 || r["api_key"] != 1 || r["oauth_client"] != 1 ||
		r["organization"] != 1 || r["team"] != 1 || r["member"] != 1 || r["repository"] != 1 || r["chart_version"] != 3 ||
		r["oci_manifest"] != 2 || r["oci_tag"] != 1 || r["oci_blob_link"] != 2 || r["quota"] != 1 || r["retention_policy"] != 1 ||
		r["webhook"] != 3 || r["audit_entry"] != 3 {
		t.Fatalf("resumed run:\n%s\n%+v", sum, sum)
	}
	if !strings.Contains(sum.String(), "webhooks:            3") {
		t.Errorf("summary:\n%s", sum)
	}
	// Once more: the target holds data now, and is left alone.
	if _, err = run(ctx, nil); err == nil || !strings.Contains(err.Error(), "already holds data") {
		t.Fatalf("third run: %v", err)
	}

	// The target serves what the source held.
	u, err := dst.UserByEmail(ctx, "bob@example.com")
	must(t, err)
	if u.ID != bob.ID || !u.Disabled {
		t.Fatalf("bob = %+v", u)
	}
	u, err = dst.User(ctx, ada.ID)
	must(t, err)
	if u.PasswordHash != ada.PasswordHash || !u.Admin {
		t.Fatalf("ada = %+v", u)
	}
	if k, err := dst.APIKeyByHash(ctx, []byte("keyhash")); err != nil || k.UserID != ada.ID {
		t.Fatalf("api key: %+v %v", k, err)
	}
	if _, err := dst.OAuthClient(ctx, "cli"); err != nil {
		t.Fatal(err)
	}
	roles, err := dst.OrgRoles(ctx, bob.ID, "bob@example.com")
	must(t, err)
	if roles["acme"] != chartctl.RoleMember {
		t.Fatalf("bob's roles = %v", roles)
	}
	rp, err := dst.Repository(ctx, "charts")
	must(t, err)
	if rp.ID != repo.ID || rp.Visibility != chartctl.VisibilityPublic || rp.Organization != "acme" {
		t.Fatalf("repository = %+v", rp)
	}
	cv, err := dst.ChartVersion(ctx, "charts", "web", "1.0.0")
	must(t, err)
	if cv.Digest != digests[0] || cv.ProvDigest == "" {
		t.Fatalf("chart = %+v", cv)
	}
	e, err := dst.IndexEntry(ctx, "charts", "web", "1.1.0")
	must(t, err)
	if !strings.Contains(string(e.IndexEntry), "version: 1.1.0") {
		t.Fatalf("index entry = %q", e.IndexEntry)
	}
	got, err := dst.ChartManifest(ctx, "charts", "web", "2.0.0")
	must(t, err)
	if got.Digest != mf.Digest {
		t.Fatalf("chart manifest = %+v", got)
	}
	refs, err := dst.Referrers(ctx, "charts/app", mf.Digest)
	must(t, err)
	if len(refs) != 1 || refs[0].Digest != sig.Digest {
		t.Fatalf("referrers = %+v", refs)
	}
	if d, err := dst.Tag(ctx, "charts/app", "2.0.0"); err != nil || d != mf.Digest {
		t.Fatalf("tag = %s %v", d, err)
	}
	b, err := dstBlobs.Open(ctx, layer)
	must(t, err)
	b.Close()

	q, usage, err := dst.Quota(ctx, chartctl.QuotaRepository, "charts")
	must(t, err)
	if q.MaxVersions == nil || *q.MaxVersions != 2 || usage.Versions != 3 {
		t.Fatalf("quota %+v usage %+v", q, usage)
	}
	policies, err := dst.RetentionPolicies(ctx)
	must(t, err)
	if p := policies["charts"]; p == nil || p.KeepLatest == nil || *p.KeepLatest != 5 {
		t.Fatalf("retention policies %+v", policies)
	}
	for _, w := range hooks {
		got, err := dst.Webhook(ctx, w.ID)
		must(t, err)
		if got.URL != w.URL || got.Repository != w.Repository || got.Organization != w.Organization || got.Active != w.Active ||
			string(got.Secret) != string(w.Secret) || got.DisabledReason != w.DisabledReason {
			t.Fatalf("webhook %+v, want %+v", got, w)
		}
	}
	// Counted once, though the migration ran twice.
	cv, err = dst.ChartVersion(ctx, "charts", "web", "1.1.0")
	must(t, err)
	if cv.Downloads != 7 || cv.LastDownloadedAt == nil || !cv.LastDownloadedAt.Equal(lastDownload) {
		t.Fatalf("downloads %d %v", cv.Downloads, cv.LastDownloadedAt)
	}
	entries, _, err := dst.AuditLog(ctx, chartctl.AuditFilter{})
	must(t, err)
	if len(entries) != 3 || entries[0].Action != "session.signin" || entries[2].Action != "repository.create" ||
		!entries[2].Time.Equal(lastDownload) || entries[0].Actor.Email != "ada@example.com" {
		t.Fatalf("audit log %+v", entries)
	}
}
