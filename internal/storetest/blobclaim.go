package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testBlobClaims checks the blob claim protocol: a deletion runs only for
// an unreferenced, unclaimed digest; claims of several holders each keep
// it; a claim lapses; and a claim waits for a deletion under way, so a
// blob committed after the claim is never deleted by it.
func testBlobClaims(t *testing.T, open Open) {
	s := open(t)
	d, other := Digest("claimed blob"), Digest("other blob")
	ran := 0
	del := func(context.Context) (bool, error) { ran++; return true, nil }
	deleteIt := func(digest string) bool {
		t.Helper()
		ok, err := s.DeleteUnreferencedBlob(ctx, digest, del)
		must(t, err)
		return ok
	}

	must(t, s.ClaimBlobs(ctx, "upload-1", []string{d}, time.Hour))
	must(t, s.ClaimBlobs(ctx, "upload-2", []string{d, d}, time.Hour))
	if deleteIt(d) || ran != 0 {
		t.Fatal("a claimed blob was deleted")
	}
	if !deleteIt(other) || ran != 1 {
		t.Fatal("an unclaimed, unreferenced blob was not deleted")
	}
	must(t, s.ReleaseBlobClaims(ctx, "upload-1", []string{d}))
	must(t, s.ReleaseBlobClaims(ctx, "someone-else", []string{d}))
	if deleteIt(d) {
		t.Fatal("upload-1's release (or a stranger's) ended upload-2's claim")
	}
	must(t, s.ReleaseBlobClaims(ctx, "upload-2", []string{d}))
	if !deleteIt(d) || ran != 2 {
		t.Fatal("a blob whose claims were released was not deleted")
	}

	// A reference keeps the blob whatever the claims say: a chart
	// version's archive or provenance file, an OCI link.
	mustRepo(t, s, "claims", "")
	cv := chart("claims", "web", "1.0.0")
	cv.ProvDigest, cv.ProvSize = Digest("claims prov"), 10
	mustPut(t, s, cv)
	must(t, s.LinkBlob(ctx, "claims/layers", Digest("claims layer"), 5))
	for _, ref := range []string{cv.Digest, cv.ProvDigest, Digest("claims layer")} {
		if deleteIt(ref) {
			t.Fatalf("referenced blob %s deleted", ref)
		}
	}
	if _, _, err := s.DeleteChartVersion(ctx, "claims", "web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if !deleteIt(cv.Digest) {
		t.Fatal("the blob of a deleted chart version was not deleted")
	}

	// del may decline, and its error comes back as is.
	if ok, err := s.DeleteUnreferencedBlob(ctx, d, func(context.Context) (bool, error) { return false, nil }); ok || err != nil {
		t.Fatalf("declined deletion = %v, %v", ok, err)
	}
	boom := errors.New("object store down")
	if _, err := s.DeleteUnreferencedBlob(ctx, d, func(context.Context) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Fatalf("del's error = %v, want %v", err, boom)
	}
	// Nothing to claim or delete: no error.
	must(t, s.ClaimBlobs(ctx, "upload-3", nil, time.Hour))
	must(t, s.ClaimBlobs(ctx, "upload-3", []string{""}, time.Hour))
	if deleteIt("") {
		t.Fatal("deleted the empty digest")
	}

	// A claim lapses on its own: a writer that died holds the blob for
	// its time to live only.
	must(t, s.ClaimBlobs(ctx, "dead-writer", []string{d}, time.Millisecond))
	deadline := time.Now().Add(10 * time.Second)
	for !deleteIt(d) {
		if time.Now().After(deadline) {
			t.Fatal("a claim of 1ms never lapsed")
		}
		time.Sleep(5 * time.Millisecond)
	}

	// A claim made while a deletion of its digest is under way returns
	// only once the deletion is done: the writer then commits its blob
	// afresh. (The pause before letting the deletion finish only gives
	// the claim a chance to arrive; the order checked does not depend on
	// it.)
	var mu sync.Mutex
	var order []string
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	inDel, finish := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		_, err := s.DeleteUnreferencedBlob(ctx, d, func(context.Context) (bool, error) {
			close(inDel)
			<-finish
			note("deleted")
			return true, nil
		})
		if err != nil {
			t.Error(err)
		}
	})
	<-inDel
	wg.Go(func() {
		if err := s.ClaimBlobs(ctx, "late-writer", []string{other, d}, time.Hour); err != nil {
			t.Error(err)
		}
		note("claimed")
	})
	time.Sleep(50 * time.Millisecond)
	close(finish)
	wg.Wait()
	if fmt.Sprint(order) != "[deleted claimed]" {
		t.Fatalf("order = %v: a claim returned while a deletion of its blob was under way", order)
	}
	if deleteIt(d) {
		t.Fatal("the late writer's claim did not keep the blob")
	}

	must(t, s.ReleaseBlobClaims(ctx, "late-writer", []string{other, d}))

	// Many writers and deleters at once: no deletion ever runs while a
	// writer holds a claim (between its ClaimBlobs and its release, where
	// it would commit its blob and record).
	var active, violations atomic.Int32
	wg = sync.WaitGroup{}
	for i := range Racers {
		wg.Go(func() {
			holder := fmt.Sprintf("racer-%d", i)
			if err := s.ClaimBlobs(ctx, holder, []string{d}, time.Hour); err != nil {
				t.Error(err)
				return
			}
			active.Add(1)
			time.Sleep(time.Millisecond) // the writer's commits
			active.Add(-1)
			if err := s.ReleaseBlobClaims(ctx, holder, []string{d}); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			_, err := s.DeleteUnreferencedBlob(ctx, d, func(context.Context) (bool, error) {
				if active.Load() > 0 {
					violations.Add(1)
				}
				return true, nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := violations.Load(); n > 0 {
		t.Fatalf("%d deletions ran while a writer held a claim", n)
	}
}
