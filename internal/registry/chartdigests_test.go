package registry_test

import (
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/chartctl/chartctl/internal/testkit"
)

// TestChartDigestIndexFollowsChanges: once a chart's digests are read
// (any OCI request for one of its blobs or manifests), versions uploaded,
// overwritten and deleted over /v1 show on the registry at once.
func TestChartDigestIndexFollowsChanges(t *testing.T) {
	e := setup(t)
	mustRepoIn(t, e, "idx", "private")
	v1 := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	if r := e.Upload(t, "idx", e.AdminKey, v1, ""); r.StatusCode != 200 && r.StatusCode != 201 {
		t.Fatalf("upload: %d", r.StatusCode)
	}
	blob := func(d string) int {
		return e.do(t, "HEAD", "/v2/idx/web/blobs/"+d, e.AdminKey, nil).StatusCode
	}
	// Loads the chart's digests.
	if got := blob(digest.FromString("not a blob of web").String()); got != 404 {
		t.Fatalf("unknown digest: %d", got)
	}
	if got := blob(digest.FromBytes(v1).String()); got != 200 {
		t.Fatalf("layer of 1.0.0: %d", got)
	}

	v2 := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "2.0.0", Description: "second"})
	if r := e.Upload(t, "idx", e.AdminKey, v2, ""); r.StatusCode != 200 && r.StatusCode != 201 {
		t.Fatalf("upload 2.0.0: %d", r.StatusCode)
	}
	if got := blob(digest.FromBytes(v2).String()); got != 200 {
		t.Fatalf("layer of a version uploaded after the index was read: %d", got)
	}
	m := e.do(t, "GET", "/v2/idx/web/manifests/2.0.0", e.AdminKey, nil)
	if m.StatusCode != 200 {
		t.Fatalf("manifest: %d", m.StatusCode)
	}
	byDigest := e.do(t, "HEAD", "/v2/idx/web/manifests/"+m.Header.Get("Docker-Content-Digest"), e.AdminKey, nil)
	if byDigest.StatusCode != 200 {
		t.Fatalf("derived manifest by digest: %d", byDigest.StatusCode)
	}
	var man struct{ Config struct{ Digest string } }
	m.JSON(t, &man)
	if got := blob(man.Config.Digest); got != 200 {
		t.Fatalf("derived config: %d", got)
	}

	if r := e.Do(t, "DELETE", "/v1/repositories/idx/charts/web/2.0.0", e.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	if got := blob(man.Config.Digest); got != 404 {
		t.Fatalf("config of a deleted version: %d", got)
	}
	if r := e.do(t, "HEAD", "/v2/idx/web/manifests/"+m.Header.Get("Docker-Content-Digest"), e.AdminKey, nil); r.StatusCode != 404 {
		t.Fatalf("manifest of a deleted version by digest: %d", r.StatusCode)
	}
	if got := blob(digest.FromBytes(v1).String()); got != 200 {
		t.Fatalf("layer of the version left: %d", got)
	}
}
