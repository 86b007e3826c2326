package app_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/s3blob"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/enginetest"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/internal/testkit/s3test"
)

func TestMain(m *testing.M) { os.Exit(enginetest.Main(m)) }

// engines are the storage set-ups two application layers can share: one
// bolt file and one blob directory in one process (bolt locks its file),
// or one PostgreSQL database and one S3 bucket, each layer with its own
// connections, as two replicas have.
var engines = []struct {
	name string
	open func(t *testing.T) (replica func(t *testing.T) (chartctl.Store, chartctl.BlobStore))
}{
	{"bolt+files", func(t *testing.T) func(t *testing.T) (chartctl.Store, chartctl.BlobStore) {
		dir := t.TempDir()
		db, err := bolt.Open(filepath.Join(dir, "chartctl.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		blobs, err := blob.Open(filepath.Join(dir, "blobs"))
		if err != nil {
			t.Fatal(err)
		}
		return func(*testing.T) (chartctl.Store, chartctl.BlobStore) { return db, blobs }
	}},
	{"postgres+s3", func(t *testing.T) func(t *testing.T) (chartctl.Store, chartctl.BlobStore) {
		dbURL := pgtest.Shared(t).NewDatabase(t)
		bucketURL := s3test.Shared(t).NewBucket(t)
		return func(t *testing.T) (chartctl.Store, chartctl.BlobStore) {
			db, err := postgres.Open(context.Background(), dbURL)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			blobs, err := s3blob.Open(context.Background(), bucketURL)
			if err != nil {
				t.Fatal(err)
			}
			return db, blobs
		}
	}},
}

// pausedStore runs beforePut before every PutChartVersion: between an
// upload's blob commit and its record's.
type pausedStore struct {
	chartctl.Store
	beforePut func()
}

func (s *pausedStore) PutChartVersion(ctx context.Context, cv *chartctl.ChartVersion, opts chartctl.PutVersionOptions) (*chartctl.ChartVersion, bool, []string, error) {
	if s.beforePut != nil {
		s.beforePut()
	}
	return s.Store.PutChartVersion(ctx, cv, opts)
}

// twoReplicas returns two Apps on one store of the engine opened by open
// (two replicas of one site), named r1 and r2.
func twoReplicas(t *testing.T, open func(t *testing.T) (replica func(t *testing.T) (chartctl.Store, chartctl.BlobStore)), opts app.Options) (*app.App, *app.App) {
	t.Helper()
	replica := open(t)
	db1, blobs1 := replica(t)
	db2, blobs2 := replica(t)
	a1, a2 := app.New(db1, blobs1, opts), app.New(db2, blobs2, opts)
	a1.Replica, a2.Replica = "r1", "r2"
	return a1, a2
}

func mustRepo(t *testing.T, a *app.App, name string) *chartctl.Repository {
	t.Helper()
	r := &chartctl.Repository{Name: name, Visibility: chartctl.VisibilityPublic}
	if err := a.CreateRepository(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return r
}

func push(t *testing.T, a *app.App, r *chartctl.Repository, archive []byte) (*chartctl.ChartVersion, error) {
	t.Helper()
	u, err := a.ReceiveArchive(context.Background(), bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	cv, _, err := a.PutChart(context.Background(), r, u, app.PutOptions{})
	return cv, err
}

// mustRead fails unless blobs holds digest with exactly want.
func mustRead(t *testing.T, blobs chartctl.BlobStore, digest string, want []byte) {
	t.Helper()
	b, err := blobs.Open(context.Background(), digest)
	if err != nil {
		t.Fatalf("blob %s of an acknowledged chart: %v", digest, err)
	}
	defer b.Close()
	got, err := io.ReadAll(b)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("blob %s: %d bytes, %v", digest, len(got), err)
	}
}

// TestDeleteRacingUploadOfSameBytes: two replicas share a database and a
// blob store. Replica B uploads a chart archive whose bytes (so whose
// blob) a chart version on replica A also has; A deletes that version
// after B committed the blob and before B committed its record. The
// deletion must leave the blob, which B's acknowledged chart refers to.
// The grace period is switched off, so only the claims protect it; with
// it (the default) a delete leaves a young blob anyway. The sweep then
// reclaims the blob once nothing refers to it and it is past the grace
// period, not before.
func TestDeleteRacingUploadOfSameBytes(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			replica := e.open(t)
			ctx := context.Background()
			storeA, blobsA := replica(t)
			storeB, blobsB := replica(t)
			a := app.New(storeA, blobsA, app.Options{Config: app.Config{MaxChartSize: 1 << 20, BlobGrace: -1}})
			paused := &pausedStore{Store: storeB}
			b := app.New(paused, blobsB, app.Options{Config: app.Config{MaxChartSize: 1 << 20, BlobGrace: -1}})

			archive := testkit.MakeChart(t, testkit.Chart{Name: "shared", Version: "1.0.0"})
			onA, onB := mustRepo(t, a, "team-a"), mustRepo(t, a, "team-b")
			old, err := push(t, a, onA, archive)
			if err != nil {
				t.Fatal(err)
			}
			deleted := false
			paused.beforePut = func() {
				// B's blob is committed (the same digest as A's version);
				// its record is not yet.
				paused.beforePut = nil
				if _, err := a.DeleteChart(ctx, onA, "shared", "1.0.0"); err != nil {
					t.Error(err)
				}
				deleted = true
			}
			got, err := push(t, b, onB, archive)
			if err != nil {
				t.Fatal(err)
			}
			if !deleted || got.Digest != old.Digest {
				t.Fatalf("the race did not happen: deleted=%v, digests %s and %s", deleted, old.Digest, got.Digest)
			}
			if _, err := storeA.ChartVersion(ctx, "team-a", "shared", "1.0.0"); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
				t.Fatalf("A's version after its delete: %v", err)
			}
			mustRead(t, blobsA, got.Digest, archive)
			mustRead(t, blobsB, got.Digest, archive)

			// Many rounds of the race, unpaused, both ways round: every
			// acknowledged version keeps its blob.
			var wg sync.WaitGroup
			for i := range 8 {
				arch := testkit.MakeChart(t, testkit.Chart{Name: "racer", Version: fmt.Sprintf("1.%d.0", i)})
				if _, err := push(t, a, onA, arch); err != nil {
					t.Fatal(err)
				}
				wg.Go(func() {
					if _, err := a.DeleteChart(ctx, onA, "racer", fmt.Sprintf("1.%d.0", i)); err != nil {
						t.Error(err)
					}
				})
				wg.Go(func() {
					if _, err := push(t, b, onB, arch); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			cvs, err := storeB.ChartVersions(ctx, "team-b", chartctl.ChartFilter{})
			if err != nil || len(cvs) != 9 {
				t.Fatalf("team-b holds %d versions (%v), want 9", len(cvs), err)
			}
			for _, cv := range cvs {
				if _, err := blobsA.ModTime(ctx, cv.Digest); err != nil {
					t.Errorf("%s %s lost its blob: %v", cv.Name, cv.Version, err)
				}
			}
		})
	}
}

// TestSweepReclaimsOrphansPastGrace: with the default grace period, a
// deleted version's blob stays (a younger orphan may be one another
// replica is about to refer to), the sweep on another replica spares it
// while it is young, and removes it once it is past the grace period;
// admin verify's view (BlobCollectable) agrees. Referenced blobs stay.
func TestSweepReclaimsOrphansPastGrace(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			replica := e.open(t)
			ctx := context.Background()
			storeA, blobsA := replica(t)
			storeB, blobsB := replica(t)
			a := app.New(storeA, blobsA, app.Options{Config: app.Config{MaxChartSize: 1 << 20}})
			now := time.Now()
			b := app.New(storeB, blobsB, app.Options{Config: app.Config{MaxChartSize: 1 << 20}, Now: func() time.Time { return now }})
			r := mustRepo(t, a, "charts")
			gone, err := push(t, a, r, testkit.MakeChart(t, testkit.Chart{Name: "gone", Version: "1.0.0"}))
			if err != nil {
				t.Fatal(err)
			}
			kept, err := push(t, a, r, testkit.MakeChart(t, testkit.Chart{Name: "kept", Version: "1.0.0"}))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.DeleteChart(ctx, r, "gone", "1.0.0"); err != nil {
				t.Fatal(err)
			}
			if _, err := blobsB.ModTime(ctx, gone.Digest); err != nil {
				t.Fatalf("a delete removed a blob younger than the grace period: %v", err)
			}
			stop := make(chan struct{})
			b.SweepOrphanBlobs(ctx, stop)
			if _, err := blobsB.ModTime(ctx, gone.Digest); err != nil {
				t.Fatalf("the sweep removed a blob younger than the grace period: %v", err)
			}
			if b.BlobCollectable(ctx, gone.Digest, now.Add(-b.BlobGrace())) {
				t.Fatal("a young orphan reported collectable")
			}

			now = now.Add(app.DefaultBlobGrace + time.Minute)
			if !b.BlobCollectable(ctx, gone.Digest, now.Add(-b.BlobGrace())) {
				t.Fatal("an orphan past the grace period not reported collectable")
			}
			b.SweepOrphanBlobs(ctx, stop)
			if _, err := blobsA.ModTime(ctx, gone.Digest); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
				t.Fatalf("the orphan past the grace period is still stored: %v", err)
			}
			if _, err := blobsA.ModTime(ctx, kept.Digest); err != nil {
				t.Fatalf("the sweep removed a referenced blob: %v", err)
			}
		})
	}
}
