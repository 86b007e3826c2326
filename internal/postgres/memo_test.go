package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/storetest"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
)

// memoManifest is an OCI manifest of name referring to blob.
func memoManifest(name, blob, salt string) *chartctl.OCIManifest {
	content := []byte(`{"schemaVersion":2,"layers":"` + blob + `","salt":"` + salt + `"}`)
	return &chartctl.OCIManifest{Name: name, Digest: storetest.Digest(string(content)),
		MediaType: "application/vnd.oci.image.manifest.v1+json", ArtifactType: "application/vnd.example",
		Blobs: []string{blob}, Content: content}
}

// TestRegistryMemosAcrossReplicas: with WatchIndex running, a replica
// answers a manifest by tag and a blob link from memory, yet reads its
// own writes at once and another replica's (a moved tag, a deleted tag,
// an unlinked blob) within the watcher's polls; without the watcher every
// read goes to the database.
func TestRegistryMemosAcrossReplicas(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	open := func() *postgres.DB {
		db, err := postgres.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	a, b := open(), open()
	if err := a.CreateRepository(ctx, &chartctl.Repository{Name: "apps"}); err != nil {
		t.Fatal(err)
	}
	const name = "apps/img"
	blob := storetest.Digest("layer")
	if err := a.LinkBlob(ctx, name, blob, 10); err != nil {
		t.Fatal(err)
	}
	m1, m2 := memoManifest(name, blob, "one"), memoManifest(name, blob, "two")
	for _, m := range []*chartctl.OCIManifest{m1, m2} {
		if err := a.PutManifest(ctx, m, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.PutManifest(ctx, m1, "v1"); err != nil {
		t.Fatal(err)
	}
	tagged := func(db *postgres.DB) string {
		t.Helper()
		m, err := db.TaggedManifest(ctx, name, "v1")
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return "none"
		} else if err != nil {
			t.Fatal(err)
		}
		return m.Digest
	}
	// eventually waits, far above the watcher's poll (no timing is
	// asserted), until what reads want.
	eventually := func(what string, read func() string, want string) {
		t.Helper()
		got := ""
		for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(5 * time.Millisecond) {
			if got = read(); got == want {
				return
			}
		}
		t.Fatalf("%s: %s, want %s", what, got, want)
	}

	// No watcher: b sees a's move at once (nothing is kept).
	if got := tagged(b); got != m1.Digest {
		t.Fatalf("b reads v1 at %s, want %s", got, m1.Digest)
	}
	if err := a.PutManifest(ctx, m2, "v1"); err != nil {
		t.Fatal(err)
	}
	if got := tagged(b); got != m2.Digest {
		t.Fatalf("without a watcher b reads v1 at %s after a moved it to %s", got, m2.Digest)
	}

	wctx, cancel := context.WithCancel(ctx)
	doneA := a.WatchIndex(wctx, &indexEvents{}, 50*time.Millisecond)
	doneB := b.WatchIndex(wctx, &indexEvents{}, 50*time.Millisecond)
	defer func() { cancel(); <-doneA; <-doneB }()

	// Kept: the same manifest record comes back.
	first, err := b.TaggedManifest(ctx, name, "v1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := b.TaggedManifest(ctx, name, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if first != again {
		// A poll may fall between the two reads; the third read after
		// a fresh one must then be kept.
		again, _ = b.TaggedManifest(ctx, name, "v1")
		third, _ := b.TaggedManifest(ctx, name, "v1")
		if again != third {
			t.Fatal("b read the tag from the database every time, not from its memo")
		}
	}

	// b's own write: read at once.
	if err := b.PutManifest(ctx, m1, "v1"); err != nil {
		t.Fatal(err)
	}
	if got := tagged(b); got != m1.Digest {
		t.Fatalf("b reads v1 at %s right after moving it to %s", got, m1.Digest)
	}
	// a's writes: read within the polls.
	if got := tagged(a); got != m1.Digest {
		t.Fatalf("a reads v1 at %s, want %s", got, m1.Digest)
	}
	if err := a.PutManifest(ctx, m2, "v1"); err != nil {
		t.Fatal(err)
	}
	eventually("b's v1 after a moved it", func() string { return tagged(b) }, m2.Digest)
	if err := a.DeleteTag(ctx, name, "v1"); err != nil {
		t.Fatal(err)
	}
	eventually("b's v1 after a deleted it", func() string { return tagged(b) }, "none")

	link := func(db *postgres.DB) string {
		t.Helper()
		l, err := db.BlobLink(ctx, name, blob)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return "none"
		} else if err != nil {
			t.Fatal(err)
		}
		return strings.TrimPrefix(l.Digest, "sha256:")[:8]
	}
	linked := strings.TrimPrefix(blob, "sha256:")[:8]
	if got := link(b); got != linked {
		t.Fatalf("b's link: %s", got)
	}
	for _, m := range []*chartctl.OCIManifest{m1, m2} {
		if _, err := a.DeleteManifest(ctx, name, m.Digest); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.UnlinkBlob(ctx, name, blob); err != nil {
		t.Fatal(err)
	}
	eventually("b's link after a unlinked it", func() string { return link(b) }, "none")
	if err := b.LinkBlob(ctx, name, blob, 10); err != nil {
		t.Fatal(err)
	}
	if got := link(b); got != linked {
		t.Fatalf("b's link right after linking it: %s", got)
	}

	// A page of tags: b's own tag at once, a's within the polls.
	tags := func(db *postgres.DB) string {
		t.Helper()
		page, _, err := db.Tags(ctx, name, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(page, ",")
	}
	if err := b.PutManifest(ctx, m1, "v1"); err != nil {
		t.Fatal(err)
	}
	if got := tags(b) + "|" + tags(b); got != "v1|v1" {
		t.Fatalf("b's tags right after tagging v1: %s", got)
	}
	if err := a.PutManifest(ctx, m1, "v2"); err != nil {
		t.Fatal(err)
	}
	eventually("b's tags after a tagged v2", func() string { return tags(b) }, "v1,v2")
}
