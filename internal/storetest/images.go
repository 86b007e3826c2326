package storetest

import (
	"reflect"
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
