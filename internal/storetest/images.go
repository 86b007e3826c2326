package storetest

import (
	"reflect"
	"sort"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// testImages checks the image records of chart versions (issue #33): a
// version starts without one (pending), SaveImages records it for the
// archive it names and every read returns it, a record for another
// archive or an unknown version is skipped (in the same call as one
// stored), a restore (PutChartVersion with Images) keeps it, an export
// carries it and a replaced archive drops it.
func testImages(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "apps", "")
	cv := mustPut(t, s, chart("apps", "web", "1.0.0"))
	got, err := s.ChartVersion(ctx, "apps", "web", "1.0.0")
	must(t, err)
	if got.Images != nil {
		t.Fatalf("a new version has images %+v, want none (pending)", got.Images)
	}
	rendered := &chartctl.Images{Images: []string{"docker.io/library/nginx:1.25.3", "ghcr.io/acme/side:v1"}, Source: chartctl.ImagesRendered,
		KubeVersion: "v1.31.0", CheckedAt: base}
	saveImages(t, s, 1, chartctl.FoundImages{Repository: "apps", Name: "web", Version: "1.0.0", Digest: cv.Digest, Images: rendered})
	wantImages := func(what string, got *chartctl.Images, want *chartctl.Images) {
		t.Helper()
		if want == nil || got == nil {
			if got != want {
				t.Fatalf("%s: images %+v, want %+v", what, got, want)
			}
			return
		}
		if !reflect.DeepEqual(got.Images, want.Images) || got.Source != want.Source || got.Error != want.Error ||
			got.KubeVersion != want.KubeVersion || !sameTime(got.CheckedAt, want.CheckedAt) {
			t.Fatalf("%s: images %+v, want %+v", what, got, want)
		}
	}
	got, err = s.ChartVersion(ctx, "apps", "web", "1.0.0")
	must(t, err)
	wantImages("ChartVersion", got.Images, rendered)
	list, err := s.ChartVersions(ctx, "apps", chartctl.ChartFilter{})
	must(t, err)
	if len(list) != 1 {
		t.Fatalf("ChartVersions = %d versions", len(list))
	}
	wantImages("ChartVersions", list[0].Images, rendered)

	// The record names its archive: one computed for an archive replaced
	// meanwhile is skipped, and so is one for a version gone, while the
	// same call stores the others. An unrenderable chart keeps its reason.
	failed := &chartctl.Images{Source: chartctl.ImagesUnrenderable, Error: "the chart looks up objects in a cluster (lookup)", CheckedAt: base}
	saveImages(t, s, 1,
		chartctl.FoundImages{Repository: "apps", Name: "web", Version: "1.0.0", Digest: Digest("other"), Images: rendered},
		chartctl.FoundImages{Repository: "apps", Name: "web", Version: "9.9.9", Digest: cv.Digest, Images: rendered},
		chartctl.FoundImages{Repository: "nope", Name: "web", Version: "1.0.0", Digest: cv.Digest, Images: rendered},
		chartctl.FoundImages{Repository: "apps", Name: "web", Version: "1.0.0", Digest: cv.Digest, Images: failed},
	)
	got, err = s.ChartVersion(ctx, "apps", "web", "1.0.0")
	must(t, err)
	wantImages("unrenderable", got.Images, failed)
	saveImages(t, s, 0, chartctl.FoundImages{Repository: "apps", Name: "web", Version: "1.0.0", Digest: Digest("other"), Images: rendered})
	got, err = s.ChartVersion(ctx, "apps", "web", "1.0.0")
	must(t, err)
	wantImages("after a record for another archive", got.Images, failed)
	_, err = s.SaveImages(ctx, []chartctl.FoundImages{{Repository: "apps", Name: "web", Version: "1.0.0", Images: rendered}})
	wantCode(t, err, chartctl.EINVALID)

	// A restore stores the record as given.
	restored := chart("apps", "api", "2.0.0")
	restored.Images = &chartctl.Images{Images: []string{"docker.io/bitnami/redis:7.2"}, Source: chartctl.ImagesAnnotation, CheckedAt: base}
	mustPut(t, s, restored)
	got, err = s.ChartVersion(ctx, "apps", "api", "2.0.0")
	must(t, err)
	wantImages("restored", got.Images, restored.Images)

	if ex, ok := s.(chartctl.Exporter); ok {
		found := 0
		must(t, ex.Export(ctx, nil, func(r chartctl.DumpRecord) error {
			if r.ChartVersion != nil && r.ChartVersion.Name == "api" {
				found++
				wantImages("export", r.ChartVersion.Images, restored.Images)
			}
			return nil
		}))
		if found != 1 {
			t.Fatalf("the export has %d api versions", found)
		}
	}

	// Another archive for the version is another chart: pending again.
	other := chart("apps", "web", "1.0.0")
	other.Digest, other.ContentDigest = Digest("web-1.0.0 rebuilt"), Digest("other files")
	_, created, _, err := s.PutChartVersion(ctx, other, chartctl.PutVersionOptions{Overwrite: true})
	must(t, err)
	if !created {
		t.Fatal("the overwrite created nothing")
	}
	got, err = s.ChartVersion(ctx, "apps", "web", "1.0.0")
	must(t, err)
	wantImages("after an overwrite", got.Images, nil)
}

// testRendered checks the renderings kept per archive (issue #33): none
// at first, SaveImages keeps and replaces the bytes (with or without an
// image record, for a version stored or not), RenderedDigests
// lists them, and PruneRendered deletes only those of archives no version
// holds any more (a deleted version's, one never stored).
func testRendered(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "apps", "")
	web := mustPut(t, s, chart("apps", "web", "1.0.0"))
	api := mustPut(t, s, chart("apps", "api", "1.0.0"))
	_, err := s.Rendered(ctx, web.Digest)
	wantCode(t, err, chartctl.ENOTFOUND)
	if got, err := s.RenderedDigests(ctx); err != nil || len(got) != 0 {
		t.Fatalf("RenderedDigests of a new store = %q, %v", got, err)
	}
	stray := Digest("never stored")
	webImages := &chartctl.Images{Images: []string{"docker.io/library/nginx:1.25.3"}, Source: chartctl.ImagesRendered, CheckedAt: base}
	saveImages(t, s, 1, chartctl.FoundImages{Repository: "apps", Name: "web", Version: "1.0.0", Digest: web.Digest, Images: webImages, Rendered: []byte("first")})
	saveImages(t, s, 0,
		chartctl.FoundImages{Repository: "apps", Name: "web", Version: "1.0.0", Digest: web.Digest, Rendered: []byte{0, 1, 2, 0xff}},
		chartctl.FoundImages{Repository: "apps", Name: "api", Version: "1.0.0", Digest: api.Digest, Rendered: []byte("api")},
		chartctl.FoundImages{Repository: "apps", Name: "gone", Version: "1.0.0", Digest: stray, Images: webImages, Rendered: []byte("stray")},
	)
	if cv, err := s.ChartVersion(ctx, "apps", "web", "1.0.0"); err != nil || cv.Images == nil || cv.Images.Images[0] != webImages.Images[0] {
		t.Fatalf("web's images after a rendering alone was saved: %+v, %v", cv, err)
	}
	if got, err := s.Rendered(ctx, web.Digest); err != nil || !reflect.DeepEqual(got, []byte{0, 1, 2, 0xff}) {
		t.Fatalf("Rendered(web) = %q, %v; want the bytes kept last", got, err)
	}
	got, err := s.RenderedDigests(ctx)
	must(t, err)
	sort.Strings(got)
	want := []string{web.Digest, api.Digest, stray}
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("RenderedDigests = %q, want %q", got, want)
	}

	if _, _, err := s.DeleteChartVersion(ctx, "apps", "api", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	n, err := s.PruneRendered(ctx)
	must(t, err)
	if n != 2 {
		t.Fatalf("PruneRendered = %d, want 2 (the deleted version's and the stray one)", n)
	}
	if got, err := s.Rendered(ctx, web.Digest); err != nil || len(got) != 4 {
		t.Fatalf("a stored version's rendering after pruning: %q, %v", got, err)
	}
	for _, d := range []string{api.Digest, stray} {
		_, err := s.Rendered(ctx, d)
		wantCode(t, err, chartctl.ENOTFOUND)
	}
	if n, err := s.PruneRendered(ctx); err != nil || n != 0 {
		t.Fatalf("PruneRendered again = %d, %v", n, err)
	}
}

// saveImages calls SaveImages with found and wants it to store want image
// records.
func saveImages(t *testing.T, s Store, want int, found ...chartctl.FoundImages) {
	t.Helper()
	n, err := s.SaveImages(ctx, found)
	must(t, err)
	if n != want {
		t.Fatalf("SaveImages stored %d image records, want %d", n, want)
	}
}
