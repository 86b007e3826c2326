package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// TestSweepSparesYoungOrphans: the startup sweep deletes an unreferenced
// blob only once it is older than the grace period (another replica may be
// about to commit the record referring to a younger one), and never a
// referenced blob, however old.
func TestSweepSparesYoungOrphans(t *testing.T) {
	ctx := context.Background()
	db, blobs := openStores(t)
	put := func(data string) string {
		w, err := blobs.Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		if _, err := w.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
		d, err := w.Commit()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	age := func(d string, by time.Duration) {
		h := strings.TrimPrefix(d, "sha256:")
		old := time.Now().Add(-by)
		if err := os.Chtimes(filepath.Join(blobs.Root(), "sha256", h[:2], h), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.CreateRepository(ctx, &chartctl.Repository{Name: "r"}); err != nil {
		t.Fatal(err)
	}
	young, old, kept := put("young orphan"), put("old orphan"), put("referenced")
	age(old, 2*time.Hour)
	age(kept, 2*time.Hour)
	if _, _, _, err := db.PutChartVersion(ctx, &chartctl.ChartVersion{Repository: "r", Name: "c", Version: "1.0.0", Digest: kept}, chartctl.PutVersionOptions{}); err != nil {
		t.Fatal(err)
	}
	a := app.New(db, blobs, app.Options{Config: app.Config{BlobGrace: time.Hour}})
	a.SweepOrphanBlobs(ctx, make(chan struct{}))
	for d, want := range map[string]bool{young: true, old: false, kept: true} {
		_, err := blobs.Open(ctx, d)
		if got := err == nil; got != want {
			t.Errorf("blob %s present = %v, want %v (%v)", d, got, want, err)
		}
	}
	// Committing the same bytes again makes an old orphan young: a record
	// is about to refer to it.
	again := put("old orphan 2")
	age(again, 2*time.Hour)
	put("old orphan 2")
	a.SweepOrphanBlobs(ctx, make(chan struct{}))
	if _, err := blobs.Open(ctx, again); err != nil {
		t.Fatalf("a re-committed blob was swept: %v", err)
	}
}

// hangingWalk is a blob store whose listing does not answer until its
// context ends (an S3 endpoint that stopped answering).
type hangingWalk struct {
	chartctl.BlobStore
	started chan struct{}
}

func (h hangingWalk) Walk(ctx context.Context, _ func(string) error) error {
	close(h.started)
	<-ctx.Done()
	return ctx.Err()
}

// TestSweepReturnsAtStop: a sweep whose listing hangs returns when stop
// closes, so a blob store that does not answer does not hold up a stop.
func TestSweepReturnsAtStop(t *testing.T) {
	db, blobs := openStores(t)
	h := hangingWalk{BlobStore: blobs, started: make(chan struct{})}
	a := app.New(db, h, app.Options{})
	stop := make(chan struct{})
	returned := make(chan struct{})
	go func() {
		a.SweepOrphanBlobs(context.Background(), stop)
		close(returned)
	}()
	<-h.started
	close(stop)
	<-returned
}

// openStores opens a bolt store and a blob directory in a temporary
// directory, closed when the test ends.
func openStores(t *testing.T) (*bolt.DB, *blob.Store) {
	t.Helper()
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, "chartctl.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	return db, blobs
}
