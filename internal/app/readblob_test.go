package app_test

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
)

// openCounter counts the reads of a blob store, per digest.
type openCounter struct {
	chartctl.BlobStore
	mu    sync.Mutex
	opens map[string]int
}

func (o *openCounter) Open(ctx context.Context, d string) (chartctl.Blob, error) {
	o.mu.Lock()
	o.opens[d]++
	o.mu.Unlock()
	return o.BlobStore.Open(ctx, d)
}

func (o *openCounter) count(d string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.opens[d]
}

// TestUploadedArchiveReadFromMemory: the archive of a version just
// uploaded is kept in memory, and the server's own reads of it (its page,
// its images) take that copy instead of reading the blob store again; an
// archive the server did not receive is read from the store, and such a
// read keeps nothing.
func TestUploadedArchiveReadFromMemory(t *testing.T) {
	ctx := context.Background()
	db, files := openStores(t)
	blobs := &openCounter{BlobStore: files, opens: map[string]int{}}
	a := app.New(db, blobs, app.Options{Config: app.Config{MaxChartSize: 1 << 20}})
	repo := &chartctl.Repository{Name: "apps", Visibility: chartctl.VisibilityPublic}
	if err := a.CreateRepository(ctx, repo); err != nil {
		t.Fatal(err)
	}
	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0",
		Files: map[string]string{"templates/deploy.yaml": "image: nginx:1.27\n"}})
	u, err := a.ReceiveArchive(ctx, bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	cv, created, err := a.PutChart(ctx, repo, u, app.PutOptions{})
	if err != nil || !created {
		t.Fatalf("put: %v created %v", err, created)
	}
	if err := a.Pages.Render(ctx, cv.Digest); err != nil {
		t.Fatal(err)
	}
	b, err := a.ReadBlob(ctx, cv.Digest)
	if err != nil {
		t.Fatal(err)
	}
	got := new(bytes.Buffer)
	_, _ = got.ReadFrom(b)
	_ = b.Close()
	if !bytes.Equal(got.Bytes(), archive) {
		t.Fatal("the archive read back differs from the one uploaded")
	}
	if n := blobs.count(cv.Digest); n != 0 {
		t.Fatalf("the blob store was read %d times for the archive just uploaded; want 0", n)
	}

	// Bytes stored without this process receiving them: read from the
	// store each time, never kept.
	w, err := files.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write([]byte("stored by another replica"))
	other, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		b, err := a.ReadBlob(ctx, other)
		if err != nil {
			t.Fatal(err)
		}
		_ = b.Close()
	}
	if n := blobs.count(other); n != 2 {
		t.Fatalf("a blob not kept was read from the store %d times for two reads; want 2", n)
	}
	if st := a.BlobCacheStats(); st.Blobs != 1 {
		t.Fatalf("blobs in memory: %d, want only the uploaded archive", st.Blobs)
	}
}
