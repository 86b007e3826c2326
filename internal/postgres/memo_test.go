package postgres_test

import (
	"context"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/jackc/pgx/v5"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/storetest"
)

// memoManifest is an OCI manifest of name referring to blob.
func memoManifest(name, blob, salt string) *chartctl.OCIManifest {
	content := []byte(`{"schemaVersion":2,"layers":"` + blob + `","salt":"` + salt + `"}`)
	return &chartctl.OCIManifest{Name: name, Digest: storetest.Digest(string(content)),
		MediaType: "application/vnd.oci.image.manifest.v1+json", ArtifactType: "application/vnd.example",
		Blobs: []string{blob}, Content: content}
}

// waitUntil waits for cond, far longer than a watcher's poll (no timing
// is asserted), and fails the test with what if it never holds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal(what)
}

// TestRegistryMemosAcrossReplicas: a replica alone on its database
// answers a manifest by tag, a blob link and a page of tags from memory
// and reads its own writes at once; once another replica listens and has
// acknowledged it, both keep answers under the shared write epoch, and a
// tag moved, a tag deleted, a blob unlinked or a tag added through one is
// seen at the very next read of the other; when the other stops, the
// memos come back alone. A listener that never acknowledges (a release
// before the shared epoch) keeps them off. Without WatchIndex nothing is
// kept.
func TestRegistryMemosAcrossReplicas(t *testing.T) {
	url, dbs := openReplicas(t, 2)
	a, b := dbs[0], dbs[1]
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
	until := func(what string, cond func() bool) { t.Helper(); waitUntil(t, what, cond) }
	kept := func(db *postgres.DB) bool {
		t.Helper()
		x, err := db.TaggedManifest(ctx, name, "v1")
		if err != nil {
			t.Fatal(err)
		}
		y, err := db.TaggedManifest(ctx, name, "v1")
		if err != nil {
			t.Fatal(err)
		}
		return x == y
	}

	// No watcher: nothing is kept.
	if b.Memoizing() || kept(b) {
		t.Fatal("b keeps answers without a watcher")
	}

	// b alone: kept, and its own writes read at once.
	bctx, stopB := context.WithCancel(ctx)
	doneB := b.WatchIndex(bctx, &indexEvents{}, 50*time.Millisecond)
	defer func() { stopB(); <-doneB }()
	until("b, alone, does not keep answers", func() bool { return b.MemoizingAlone() && kept(b) })
	if err := b.PutManifest(ctx, m2, "v1"); err != nil {
		t.Fatal(err)
	}
	if got := tagged(b); got != m2.Digest {
		t.Fatalf("b reads v1 at %s right after moving it to %s", got, m2.Digest)
	}
	page := func(db *postgres.DB) string {
		t.Helper()
		p, _, err := db.Tags(ctx, name, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(p, ",")
	}
	if got := page(b) + "|" + page(b); got != "v1|v1" {
		t.Fatalf("b's tags: %s", got)
	}
	if err := b.PutManifest(ctx, m1, "v0"); err != nil {
		t.Fatal(err)
	}
	if got := page(b); got != "v0,v1" {
		t.Fatalf("b's tags right after tagging v0: %s", got)
	}

	// a starts to listen: b stops keeping answers alone (a announces
	// itself), and once each has acknowledged the other both keep them
	// under the shared epoch, and read every write of the other's at once.
	actx, stopA := context.WithCancel(ctx)
	doneA := a.WatchIndex(actx, &indexEvents{}, 50*time.Millisecond)
	if b.MemoizingAlone() {
		t.Fatal("b keeps answers alone once a's WatchIndex returned")
	}
	until("a and b do not keep answers together", func() bool { return a.Memoizing() && b.Memoizing() && kept(a) && kept(b) })
	if got := tagged(b) + tagged(a); got != m2.Digest+m2.Digest {
		t.Fatalf("v1 read %s, want %s on both", got, m2.Digest)
	}
	if err := a.PutManifest(ctx, m1, "v1"); err != nil {
		t.Fatal(err)
	}
	if got := tagged(b); got != m1.Digest {
		t.Fatalf("b reads v1 at %s right after a moved it to %s", got, m1.Digest)
	}
	if err := a.PutManifest(ctx, m2, "v2"); err != nil {
		t.Fatal(err)
	}
	if got := page(b); got != "v0,v1,v2" {
		t.Fatalf("b's tags right after a tagged v2: %s", got)
	}
	if err := a.DeleteTag(ctx, name, "v1"); err != nil {
		t.Fatal(err)
	}
	if got := tagged(b); got != "none" {
		t.Fatalf("b reads v1 at %s right after a deleted it", got)
	}
	if _, err := b.BlobLink(ctx, name, blob); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*chartctl.OCIManifest{m1, m2} {
		if _, err := a.DeleteManifest(ctx, name, m.Digest); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.UnlinkBlob(ctx, name, blob); err != nil {
		t.Fatal(err)
	}
	if _, err := b.BlobLink(ctx, name, blob); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("b's link right after a unlinked it: %v", err)
	}

	// And the other way round.
	if err := b.LinkBlob(ctx, name, blob, 10); err != nil {
		t.Fatal(err)
	}
	if err := b.PutManifest(ctx, m1, "v1"); err != nil {
		t.Fatal(err)
	}
	if got := tagged(a); got != m1.Digest {
		t.Fatalf("a reads v1 at %s right after b tagged it %s", got, m1.Digest)
	}
	if got := page(a); got != "v1" {
		t.Fatalf("a's tags right after b tagged v1: %s", got)
	}
	if err := b.PutManifest(ctx, m2, "v3"); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteTag(ctx, name, "v1"); err != nil {
		t.Fatal(err)
	}
	if got := tagged(a); got != "none" {
		t.Fatalf("a reads v1 at %s right after b deleted it", got)
	}
	if got := page(a); got != "v3" {
		t.Fatalf("a's tags right after b deleted v1: %s", got)
	}

	// A listener that never acknowledges: neither keeps answers while it
	// listens, as with a release that writes without moving the epoch.
	old, err := pgx.Connect(ctx, strings.Replace(url, "?", "?application_name=chartctl-index-listener&", 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(ctx, `LISTEN chartctl_index`); err != nil {
		t.Fatal(err)
	}
	until("a and b keep answers with a silent listener", func() bool { return !a.Memoizing() && !b.Memoizing() })
	_ = old.Close(ctx)
	until("a and b do not keep answers once the silent listener left", func() bool { return a.Memoizing() && b.Memoizing() })

	// a stops: b alone again keeps answers.
	stopA()
	<-doneA
	if err := b.LinkBlob(ctx, name, blob, 10); err != nil {
		t.Fatal(err)
	}
	if err := b.PutManifest(ctx, m1, "v1"); err != nil {
		t.Fatal(err)
	}
	until("b, alone again, does not keep answers", func() bool { return b.MemoizingAlone() && kept(b) })
}

// TestThrottleKeptWhileAlone: a replica alone on its database keeps the
// failed-authentication windows it read and still blocks at the very
// failure that uses up the budget; once another replica listens, the
// failures that one records block at the first replica's next request.
func TestThrottleKeptWhileAlone(t *testing.T) {
	url, dbs := openReplicas(t, 2)
	a, b := dbs[0], dbs[1]
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	limit := ratelimit.Limit{N: 3, Window: time.Minute}
	ta, tb := a.RateLimits(clock).NewThrottle("api", limit), b.RateLimits(clock).NewThrottle("api", limit)
	until := func(what string, cond func() bool) { t.Helper(); waitUntil(t, what, cond) }
	actx, stopA := context.WithCancel(ctx)
	doneA := a.WatchIndex(actx, &indexEvents{}, 50*time.Millisecond)
	defer func() { stopA(); <-doneA }()
	until("a is never alone", a.MemoizingAlone)

	// Alone: each of a's own failures is counted at its next question.
	for i := range 3 {
		if blocked, _ := ta.Blocked("10.0.0.1"); blocked {
			t.Fatalf("blocked after %d failures of 3", i)
		}
		ta.Fail("10.0.0.1")
	}
	if blocked, wait := ta.Blocked("10.0.0.1"); !blocked || wait != time.Minute {
		t.Fatalf("after 3 failures of 3: blocked %v for %v", blocked, wait)
	}
	if blocked, _ := ta.Blocked("10.0.0.2"); blocked {
		t.Fatal("another address is blocked")
	}
	// The window is kept: a's answer does not read the table again (the
	// rows are removed behind its back, as no replica would).
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DELETE FROM rate_windows`); err != nil {
		t.Fatal(err)
	}
	if blocked, _ := ta.Blocked("10.0.0.1"); !blocked {
		t.Fatal("a alone read the window again")
	}

	// b starts to listen: a stops keeping windows, so b's failures for an
	// address a has already answered about are seen at once.
	bctx, stopB := context.WithCancel(ctx)
	doneB := b.WatchIndex(bctx, &indexEvents{}, 50*time.Millisecond)
	defer func() { stopB(); <-doneB }()
	until("a still keeps answers alone with b listening", func() bool { return !a.MemoizingAlone() })
	for range 3 {
		tb.Fail("10.0.0.2")
	}
	if blocked, _ := ta.Blocked("10.0.0.2"); !blocked {
		t.Fatal("a does not see b's failures")
	}

	// b stops: a is alone again, and reads the windows anew.
	stopB()
	<-doneB
	until("a is not alone again", a.MemoizingAlone)
	if blocked, _ := ta.Blocked("10.0.0.2"); !blocked {
		t.Fatal("a forgot b's failures")
	}
}
