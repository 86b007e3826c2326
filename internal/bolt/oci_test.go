package bolt_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
)

func TestOCIManifestsTagsReferrers(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	cfg, layer := digest("config"), digest("layer")

	img := &chartctl.OCIManifest{Name: "r/app", Digest: digest("img"), MediaType: "m", Blobs: []string{cfg, layer}, Content: []byte("img")}
	var ue *chartctl.UnknownReferenceError
	if err := db.PutManifest(ctx, img, "v1"); !errors.As(err, &ue) || ue.Digest != cfg {
		t.Fatalf("manifest before its blobs: %v", err)
	}
	for _, d := range []string{cfg, layer} {
		if err := db.LinkBlob(ctx, "r/app", d, 10); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutManifest(ctx, img, "v1"); err != nil {
		t.Fatal(err)
	}
	if err := db.PutManifest(ctx, img, "latest"); err != nil || !img.CreatedAt.Equal(testTime) {
		t.Fatalf("second tag: %v %v", err, img.CreatedAt)
	}
	sig := &chartctl.OCIManifest{Name: "r/app", Digest: digest("sig"), MediaType: "m", ArtifactType: "sig", Subject: img.Digest, Content: []byte("sig")}
	if err := db.PutManifest(ctx, sig, ""); err != nil {
		t.Fatal(err)
	}
	idx := &chartctl.OCIManifest{Name: "r/app", Digest: digest("idx"), MediaType: "i", Manifests: []string{digest("absent")}, Content: []byte("idx")}
	if err := db.PutManifest(ctx, idx, ""); !errors.As(err, &ue) || !ue.Manifest {
		t.Fatalf("index of a missing manifest: %v", err)
	}

	if tags, more, err := db.Tags(ctx, "r/app", "", 1); err != nil || fmt.Sprint(tags) != "[latest]" || !more {
		t.Fatalf("tags page 1: %v %v %v", tags, more, err)
	}
	if tags, more, err := db.Tags(ctx, "r/app", "latest", 1); err != nil || fmt.Sprint(tags) != "[v1]" || more {
		t.Fatalf("tags page 2: %v %v %v", tags, more, err)
	}
	refs, err := db.Referrers(ctx, "r/app", img.Digest)
	if err != nil || len(refs) != 1 || refs[0].Digest != sig.Digest || string(refs[0].Content) != "sig" {
		t.Fatalf("referrers: %v %v", refs, err)
	}
	// Blobs a manifest uses are not collectable; a lone link older than
	// the cut-off is.
	if err := db.LinkBlob(ctx, "r/app", digest("lone"), 1); err != nil {
		t.Fatal(err)
	}
	links, err := db.UnreferencedLinks(ctx, testTime.Add(time.Second))
	if err != nil || len(links) != 1 || links[0].Digest != digest("lone") {
		t.Fatalf("unreferenced links: %v %v", links, err)
	}
	if links, _ := db.UnreferencedLinks(ctx, testTime); len(links) != 0 {
		t.Fatalf("links within the grace period: %v", links)
	}
	if ok, _ := db.BlobReferenced(ctx, layer); !ok {
		t.Fatal("a linked blob must count as referenced")
	}

	if _, err := db.DeleteManifest(ctx, "r/app", img.Digest); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Tag(ctx, "r/app", "v1"); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("tag after manifest delete: %v", err)
	}
	if links, _ := db.UnreferencedLinks(ctx, testTime.Add(time.Second)); len(links) != 3 {
		t.Fatalf("after delete, unreferenced links = %v", links)
	}
	if names, err := db.Names(ctx); err != nil || fmt.Sprint(names) != "[r/app]" {
		t.Fatalf("names: %v %v", names, err)
	}
}

func TestOCIChartManifestFollowsVersion(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	mustRepo(t, db, "stable", "")
	cv := chart("stable", "web", "1.0.0", "web-1.0.0")
	if _, _, _, err := db.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := digest("cfg")
	for _, d := range []string{cfg, cv.Digest} {
		if err := db.LinkBlob(ctx, "stable/web", d, 1); err != nil {
			t.Fatal(err)
		}
	}
	m := &chartctl.OCIManifest{Name: "stable/web", Digest: digest("m"), MediaType: "m", Blobs: []string{cfg, cv.Digest}, Content: []byte("m"),
		Chart: &chartctl.OCIChartRef{Repository: "stable", Name: "web", Version: "1.0.0"}}
	if err := db.PutManifest(ctx, m, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if got, err := db.ChartManifest(ctx, "stable", "web", "1.0.0"); err != nil || got.Digest != m.Digest {
		t.Fatalf("chart manifest: %v %v", got, err)
	}
	// Deleting the version deletes its manifest and tag in the same
	// transaction: deleting on one protocol deletes on both.
	if _, _, err := db.DeleteChartVersion(ctx, "stable", "web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Manifest(ctx, "stable/web", m.Digest); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("manifest after version delete: %v", err)
	}
	if _, err := db.Tag(ctx, "stable/web", "1.0.0"); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("tag after version delete: %v", err)
	}
	// Deleting the repository removes its OCI names and reports the blobs
	// it unlinked.
	if err := db.LinkBlob(ctx, "stable/other", digest("x"), 1); err != nil {
		t.Fatal(err)
	}
	orphans, err := db.DeleteRepository(ctx, "stable")
	if err != nil {
		t.Fatal(err)
	}
	if names, _ := db.Names(ctx); len(names) != 0 {
		t.Fatalf("names after repository delete: %v", names)
	}
	if ok, _ := db.BlobReferenced(ctx, digest("x")); ok {
		t.Fatal("blob still referenced after repository delete")
	}
	found := false
	for _, o := range orphans {
		found = found || o == digest("x")
	}
	if !found {
		t.Fatalf("orphans = %v, want %s among them", orphans, digest("x"))
	}
}

func TestOCIUploadsPersist(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	db, err := bolt.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	u := &chartctl.OCIUpload{ID: "u1", Name: "r/app"}
	if err := db.CreateUpload(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := db.AdvanceUpload(ctx, "u1", 0, 100); err != nil {
		t.Fatal(err)
	}
	if err := db.AdvanceUpload(ctx, "u1", 0, 50); chartctl.ErrorCode(err) != chartctl.ECONFLICT {
		t.Fatalf("stale advance: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = bolt.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.Upload(ctx, "u1")
	if err != nil || got.Offset != 100 || got.Name != "r/app" {
		t.Fatalf("after reopen: %+v %v", got, err)
	}
	if err := db.DeleteUpload(ctx, "u1"); err != nil {
		t.Fatal(err)
	}
	if ups, _ := db.Uploads(ctx); len(ups) != 0 {
		t.Fatalf("uploads = %v", ups)
	}
}

// TestManifestMemo: a manifest record read again with the same bytes comes
// from the memo, and another database's record under the same key (which
// shares the memo) is decoded from its own bytes; what a caller changes in
// a returned manifest never reaches the next reader.
func TestManifestMemo(t *testing.T) {
	ctx := context.Background()
	put := func(db *bolt.DB, annotation string) {
		t.Helper()
		m := &chartctl.OCIManifest{Name: "memo/app", Digest: digest("memo"), MediaType: "m",
			Annotations: map[string]string{"k": annotation}, Content: []byte("memo")}
		if err := db.PutManifest(ctx, m, ""); err != nil {
			t.Fatal(err)
		}
	}
	one, _ := setup(t)
	two, _ := setup(t)
	put(one, "one")
	put(two, "two")
	for range 2 {
		for _, c := range []struct {
			db   *bolt.DB
			want string
		}{{one, "one"}, {two, "two"}} {
			m, err := c.db.Manifest(ctx, "memo/app", digest("memo"))
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Annotations["k"]; got != c.want {
				t.Fatalf("annotation %q, want %q", got, c.want)
			}
			m.Annotations["k"] = "changed by a caller"
		}
	}
}

// TestBlobLinkMemo: a blob link read again comes out as stored, whichever
// of two databases holds it under the same key, and a link pushed again
// reads with its new time.
func TestBlobLinkMemo(t *testing.T) {
	ctx := context.Background()
	one, _ := setup(t)
	two, _ := setup(t)
	if err := one.LinkBlob(ctx, "memo/app", digest("b"), 1); err != nil {
		t.Fatal(err)
	}
	if err := two.LinkBlob(ctx, "memo/app", digest("b"), 2); err != nil {
		t.Fatal(err)
	}
	var first time.Time
	for range 2 {
		for _, c := range []struct {
			db   *bolt.DB
			size int64
		}{{one, 1}, {two, 2}} {
			l, err := c.db.BlobLink(ctx, "memo/app", digest("b"))
			if err != nil {
				t.Fatal(err)
			}
			if l.Size != c.size {
				t.Fatalf("size %d, want %d", l.Size, c.size)
			}
			if c.db == one {
				first = l.LinkedAt
			}
		}
	}
	one.Now = func() time.Time { return testTime.Add(time.Hour) }
	if err := one.LinkBlob(ctx, "memo/app", digest("b"), 1); err != nil {
		t.Fatal(err)
	}
	l, err := one.BlobLink(ctx, "memo/app", digest("b"))
	if err != nil {
		t.Fatal(err)
	}
	if !l.LinkedAt.Equal(first.Add(time.Hour)) {
		t.Fatalf("linked at %v after linking again, want %v", l.LinkedAt, first.Add(time.Hour))
	}
}

// TestTaggedManifestMemo: a tag read again after it moved, after its
// manifest went and after it was deleted answers what the file holds; two
// databases with the same count of commits keep their own answers; a read
// with no write since the last is given the kept manifest, and a read
// after any write, even of another record, is not.
func TestTaggedManifestMemo(t *testing.T) {
	ctx := context.Background()
	one, _ := setup(t)
	two, _ := setup(t)
	put := func(db *bolt.DB, content, tag string) string {
		t.Helper()
		m := &chartctl.OCIManifest{Name: "memo/tag", Digest: digest(content), MediaType: "m",
			Annotations: map[string]string{"k": content}, Content: []byte(content)}
		if err := db.PutManifest(ctx, m, tag); err != nil {
			t.Fatal(err)
		}
		return m.Digest
	}
	read := func(db *bolt.DB, want string) {
		t.Helper()
		for range 2 {
			m, err := db.TaggedManifest(ctx, "memo/tag", "v1")
			if err != nil {
				t.Fatal(err)
			}
			if string(m.Content) != want || m.Annotations["k"] != want {
				t.Fatalf("content %q, annotation %q, want %q", m.Content, m.Annotations["k"], want)
			}
		}
	}
	put(one, "first", "v1")
	put(two, "other", "v1")
	read(one, "first")
	read(two, "other")
	read(one, "first")

	put(one, "second", "v1") // the tag moves
	read(one, "second")
	if err := one.DeleteTag(ctx, "memo/tag", "v1"); err != nil {
		t.Fatal(err)
	}
	if _, err := one.TaggedManifest(ctx, "memo/tag", "v1"); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("deleted tag: %v", err)
	}
	d := put(two, "third", "v1")
	read(two, "third")
	if _, err := two.DeleteManifest(ctx, "memo/tag", d); err != nil {
		t.Fatal(err)
	}
	if _, err := two.TaggedManifest(ctx, "memo/tag", "v1"); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("tag of a deleted manifest: %v", err)
	}

	put(one, "fourth", "v1")
	a, err := one.TaggedManifest(ctx, "memo/tag", "v1")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := one.TaggedManifest(ctx, "memo/tag", "v1"); b != a {
		t.Fatal("a read with no write since the last was not given the kept manifest")
	}
	if err := one.LinkBlob(ctx, "memo/other", digest("unrelated"), 9); err != nil {
		t.Fatal(err)
	}
	if b, _ := one.TaggedManifest(ctx, "memo/tag", "v1"); b == a || string(b.Content) != "fourth" {
		t.Fatalf("after a write: same kept manifest %v, content %q", b == a, b.Content)
	}

	// Blob links likewise.
	l1, err := one.BlobLink(ctx, "memo/other", digest("unrelated"))
	if err != nil {
		t.Fatal(err)
	}
	if l2, _ := one.BlobLink(ctx, "memo/other", digest("unrelated")); l2 != l1 {
		t.Fatal("a link read with no write since the last was not the kept one")
	}
	if err := one.UnlinkBlob(ctx, "memo/other", digest("unrelated")); err != nil {
		t.Fatal(err)
	}
	if _, err := one.BlobLink(ctx, "memo/other", digest("unrelated")); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("unlinked blob: %v", err)
	}
}

// TestTaggedManifestMemoUnderWrites: readers running beside a writer that
// moves a tag never see a manifest older than the writer's last
// acknowledged move (run with -race).
func TestTaggedManifestMemoUnderWrites(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	var acked atomic.Int64
	put := func(i int64) {
		c := fmt.Sprint("content-", i)
		m := &chartctl.OCIManifest{Name: "memo/race", Digest: digest(c), MediaType: "m",
			Annotations: map[string]string{"i": fmt.Sprint(i)}, Content: []byte(c)}
		if err := db.PutManifest(ctx, m, "v"); err != nil {
			t.Error(err)
		}
		acked.Store(i)
	}
	put(0)
	const writes = 200
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for acked.Load() < writes {
				floor := acked.Load()
				m, err := db.TaggedManifest(ctx, "memo/race", "v")
				if err != nil {
					t.Error(err)
					return
				}
				got, _ := strconv.ParseInt(m.Annotations["i"], 10, 64)
				if got < floor {
					t.Errorf("read manifest %d after write %d was acknowledged", got, floor)
					return
				}
			}
		})
	}
	for i := int64(1); i <= writes; i++ {
		put(i)
	}
	wg.Wait()
}
