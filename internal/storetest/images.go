package storetest

import (
	"reflect"
	"sort"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// testImages checks the image records of chart versions (issue #33): a
// version starts without one (pending), SetImages records it for the
// archive it names and every read returns it, a record for another
// archive or an unknown version is ENOTFOUND, a restore (PutChartVersion
// with Images) keeps it, an export carries it and a replaced archive
// drops it.
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
	must(t, s.SetImages(ctx, "apps", "web", "1.0.0", cv.Digest, rendered))
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
	// meanwhile is refused, and so is one for a version gone.
	wantCode(t, s.SetImages(ctx, "apps", "web", "1.0.0", Digest("other"), rendered), chartctl.ENOTFOUND)
	wantCode(t, s.SetImages(ctx, "apps", "web", "9.9.9", cv.Digest, rendered), chartctl.ENOTFOUND)
	wantCode(t, s.SetImages(ctx, "nope", "web", "1.0.0", cv.Digest, rendered), chartctl.ENOTFOUND)

	// An unrenderable chart keeps its reason.
	failed := &chartctl.Images{Source: chartctl.ImagesUnrenderable, Error: "the chart looks up objects in a cluster (lookup)", CheckedAt: base}
	must(t, s.SetImages(ctx, "apps", "web", "1.0.0", cv.Digest, failed))
	got, err = s.ChartVersion(ctx, "apps", "web", "1.0.0")
	must(t, err)
	wantImages("unrenderable", got.Images, failed)

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
// at first, SetRendered keeps and replaces the bytes, RenderedDigests
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
	must(t, s.SetRendered(ctx, web.Digest, []byte("first")))
	must(t, s.SetRendered(ctx, web.Digest, []byte{0, 1, 2, 0xff}))
	must(t, s.SetRendered(ctx, api.Digest, []byte("api")))
	must(t, s.SetRendered(ctx, stray, []byte("stray")))
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
