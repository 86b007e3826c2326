package bolt_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// The same archive uploaded again with a provenance file: attached when
// the version had none (the record otherwise unchanged), a conflict when
// it had another, replaced only with overwrite; without one, or with the
// same one, nothing changes.
func TestProvenanceOnIdenticalArchive(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	mustRepo(t, db, "stable", "")
	first := mustPut(t, db, chart("stable", "web", "1.0.0", "v1"))

	db.Now = func() time.Time { return testTime.Add(time.Hour) }
	signed := chart("stable", "web", "1.0.0", "v1")
	signed.ProvDigest = digest("sig one")
	stored, created, orphans, err := db.PutChartVersion(ctx, signed, chartctl.PutVersionOptions{})
	if err != nil || !created || len(orphans) != 0 {
		t.Fatalf("attach: created=%v orphans=%v err=%v", created, orphans, err)
	}
	if stored.ProvDigest != signed.ProvDigest || !stored.CreatedAt.Equal(first.CreatedAt) || stored.Digest != first.Digest {
		t.Fatalf("attach stored %+v", stored)
	}
	got, err := db.ChartVersion(ctx, "stable", "web", "1.0.0")
	if err != nil || got.ProvDigest != signed.ProvDigest {
		t.Fatalf("after attach: %+v %v", got, err)
	}
	mustReferenced(t, db, signed.ProvDigest, true)

	// A retry with the same file, or without one, changes nothing.
	for _, p := range []string{signed.ProvDigest, ""} {
		again := chart("stable", "web", "1.0.0", "v1")
		again.ProvDigest = p
		if _, created, _, err := db.PutChartVersion(ctx, again, chartctl.PutVersionOptions{}); err != nil || created {
			t.Fatalf("retry with prov %q: created=%v err=%v", p, created, err)
		}
	}

	// Another file: conflict, unless overwriting.
	other := chart("stable", "web", "1.0.0", "v1")
	other.ProvDigest = digest("sig two")
	_, _, _, err = db.PutChartVersion(ctx, other, chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.ECONFLICT)
	stored, created, orphans, err = db.PutChartVersion(ctx, other, chartctl.PutVersionOptions{Overwrite: true})
	if err != nil || !created || fmt.Sprint(orphans) != fmt.Sprint([]string{signed.ProvDigest}) {
		t.Fatalf("replace: created=%v orphans=%v err=%v", created, orphans, err)
	}
	if stored.ProvDigest != other.ProvDigest {
		t.Fatalf("replace stored %+v", stored)
	}
	mustReferenced(t, db, signed.ProvDigest, false)
	mustReferenced(t, db, other.ProvDigest, true)
	mustReferenced(t, db, first.Digest, true)

	// Deleting the version orphans both of its blobs once.
	_, orphans, err = db.DeleteChartVersion(ctx, "stable", "web", "1.0.0")
	if err != nil || len(orphans) != 2 {
		t.Fatalf("delete: orphans=%v err=%v", orphans, err)
	}
}

// A call on a closed store (a request that outlived shutdown) is
// EUNAVAILABLE, not an internal error.
func TestClosedStoreIsUnavailable(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	mustRepo(t, db, "stable", "")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := db.Repository(ctx, "stable")
	wantCode(t, err, chartctl.EUNAVAILABLE)
	_, _, _, err = db.PutChartVersion(ctx, chart("stable", "web", "1.0.0", "v1"), chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.EUNAVAILABLE)
}
