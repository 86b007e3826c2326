package bolt_test

import (
	"context"
	"sort"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

func TestIndexEntries(t *testing.T) {
	db, _ := setup(t)
	ctx := context.Background()
	mustRepo(t, db, "r", "")
	with := &chartctl.ChartVersion{Repository: "r", Name: "web", Version: "1.0.0", Digest: digest("a"), Size: 1,
		Metadata: []byte(`{"name":"web","version":"1.0.0"}`), IndexEntry: []byte("  - name: web\n    version: 1.0.0\n")}
	stored := mustPut(t, db, with)
	if string(stored.IndexEntry) != string(with.IndexEntry) {
		t.Fatalf("stored entry = %q", stored.IndexEntry)
	}
	without := &chartctl.ChartVersion{Repository: "r", Name: "api", Version: "2.0.0", Digest: digest("b"), Size: 1,
		Metadata: []byte(`{"name":"api","version":"2.0.0"}`)}
	mustPut(t, db, without)

	got, err := db.IndexEntries(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Name < got[j].Name })
	if len(got) != 2 {
		t.Fatalf("entries = %d", len(got))
	}
	// A version stored without an entry comes as its record, to render.
	if got[0].Name != "api" || len(got[0].IndexEntry) != 0 || string(got[0].Metadata) != string(without.Metadata) || got[0].Digest != without.Digest {
		t.Fatalf("api = %+v", got[0])
	}
	if got[1].Name != "web" || got[1].Version != "1.0.0" || string(got[1].IndexEntry) != string(with.IndexEntry) || !got[1].CreatedAt.Equal(stored.CreatedAt) {
		t.Fatalf("web = %+v (stored at %v)", got[1], stored.CreatedAt)
	}
	// The record itself stays lean: the entry lives beside it.
	cv, err := db.ChartVersion(ctx, "r", "web", "1.0.0")
	if err != nil || len(cv.IndexEntry) != 0 {
		t.Fatalf("record carries the entry: %v %q", err, cv.IndexEntry)
	}

	// Deleting a version deletes its entry; deleting the repository all.
	if _, _, err := db.DeleteChartVersion(ctx, "r", "web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.IndexEntries(ctx, "r"); len(got) != 1 || got[0].Name != "api" {
		t.Fatalf("after delete: %+v", got)
	}
	mustPut(t, db, with)
	if _, err := db.DeleteRepository(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	mustRepo(t, db, "r", "")
	if got, err := db.IndexEntries(ctx, "r"); err != nil || len(got) != 0 {
		t.Fatalf("recreated repository: %+v %v", got, err)
	}
	_, err = db.IndexEntries(ctx, "ghost")
	wantCode(t, err, chartctl.ENOTFOUND)
}

func TestIndexEntry(t *testing.T) {
	db, _ := setup(t)
	ctx := context.Background()
	mustRepo(t, db, "r", "")
	with := mustPut(t, db, &chartctl.ChartVersion{Repository: "r", Name: "web", Version: "1.0.0", Digest: digest("a"), Size: 1,
		Metadata: []byte(`{"name":"web"}`), IndexEntry: []byte("  - name: web\n")})
	mustPut(t, db, &chartctl.ChartVersion{Repository: "r", Name: "api", Version: "2.0.0", Digest: digest("b"), Size: 1, Metadata: []byte(`{"name":"api"}`)})
	got, err := db.IndexEntry(ctx, "r", "web", "1.0.0")
	if err != nil || string(got.IndexEntry) != string(with.IndexEntry) || !got.CreatedAt.Equal(with.CreatedAt) {
		t.Fatalf("web = %+v, %v", got, err)
	}
	if got, err := db.IndexEntry(ctx, "r", "api", "2.0.0"); err != nil || len(got.IndexEntry) != 0 || string(got.Metadata) != `{"name":"api"}` {
		t.Fatalf("api = %+v, %v", got, err)
	}
	_, err = db.IndexEntry(ctx, "r", "web", "9.9.9")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = db.IndexEntry(ctx, "ghost", "web", "1.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)
}
