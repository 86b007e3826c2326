package app_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/helmindex"
)

// TestIndexJSONBackfill: versions stored before JSON index entries were
// kept (a YAML entry only) get theirs from the backfill, in batches, by
// the replica holding the lease, as exactly the bytes the index converts
// them to; a replica finding the lease held stores nothing and reports
// not done; a second run finds nothing left. On both stores.
func TestIndexJSONBackfill(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			ctx := context.Background()
			a1, a2 := twoReplicas(t, e.open, app.Options{})
			db1, db2 := a1.Store, a2.Store
			for _, repo := range []string{"apps", "empty"} {
				if err := db1.CreateRepository(ctx, &chartctl.Repository{Name: repo}); err != nil {
					t.Fatal(err)
				}
			}
			// More than one batch (512 versions).
			n := 600
			t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			for i := range n {
				cv := &chartctl.ChartVersion{Repository: "apps", Name: fmt.Sprintf("c%d", i%3), Version: fmt.Sprintf("1.%d.0", i),
					Digest: fmt.Sprintf("sha256:%064x", i), Size: 10, CreatedAt: t0.Add(time.Duration(i) * time.Second),
					Metadata: []byte(fmt.Sprintf(`{"apiVersion":"v2","name":"c%d","version":"1.%d.0","description":"d","keywords":["a","b"]}`, i%3, i))}
				cv.IndexEntry = helmindex.RenderEntry(cv)
				if _, _, _, err := db1.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			withJSON := func() int {
				t.Helper()
				cvs, err := db2.IndexEntries(ctx, "apps")
				if err != nil {
					t.Fatal(err)
				}
				c := 0
				for _, cv := range cvs {
					if len(cv.IndexEntryJSON) == 0 {
						continue
					}
					c++
					want := helmindex.RenderEntryJSON(&chartctl.ChartVersion{IndexEntry: cv.IndexEntry})
					if !bytes.Equal(cv.IndexEntryJSON, want) {
						t.Fatalf("%s %s: JSON entry %s, want %s", cv.Name, cv.Version, cv.IndexEntryJSON, want)
					}
				}
				return c
			}
			if c := withJSON(); c != 0 {
				t.Fatalf("%d versions have a JSON entry before the backfill", c)
			}

			// Another holder has the lease: nothing is stored.
			if ok, err := db1.AcquireLease(ctx, "index-json", "other", time.Minute); err != nil || !ok {
				t.Fatalf("AcquireLease = %v, %v", ok, err)
			}
			done, err := a1.BackfillIndexJSON(ctx)
			if err != nil || done {
				t.Fatalf("BackfillIndexJSON with the lease held elsewhere = %v, %v; want false, nil", done, err)
			}
			if c := withJSON(); c != 0 {
				t.Fatalf("%d versions got a JSON entry while the lease was held elsewhere", c)
			}
			if err := db1.ReleaseLease(ctx, "index-json", "other"); err != nil {
				t.Fatal(err)
			}

			done, err = a1.BackfillIndexJSON(ctx)
			if err != nil || !done {
				t.Fatalf("BackfillIndexJSON = %v, %v; want true, nil", done, err)
			}
			if c := withJSON(); c != n {
				t.Fatalf("%d of %d versions have a JSON entry after the backfill", c, n)
			}
			// The lease was released; the other replica finds nothing left.
			done, err = a2.BackfillIndexJSON(ctx)
			if err != nil || !done {
				t.Fatalf("second BackfillIndexJSON = %v, %v; want true, nil", done, err)
			}
		})
	}
}
