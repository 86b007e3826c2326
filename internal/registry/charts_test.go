package registry_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/chartctl/chartctl/internal/registry"
	"github.com/chartctl/chartctl/internal/testkit"
)

// chartManifest pushes archive (and prov) as blobs of name and returns a
// Helm chart manifest over them, as `helm push` builds it: no top-level
// mediaType (Helm 4.3), the config, the chart layer, the provenance layer.
func chartManifest(t testing.TB, e *env, name string, archive, prov []byte) []byte {
	t.Helper()
	config := []byte(`{"name":"x","version":"1"}`)
	e.pushBlobHTTP(t, name, e.AdminKey, config)
	e.pushBlobHTTP(t, name, e.AdminKey, archive)
	m := map[string]any{
		"schemaVersion": 2,
		"config":        ocispec.Descriptor{MediaType: registry.MediaTypeHelmConfig, Digest: digest.FromBytes(config), Size: int64(len(config))},
		"layers":        []ocispec.Descriptor{{MediaType: registry.MediaTypeHelmChart, Digest: digest.FromBytes(archive), Size: int64(len(archive))}},
	}
	if prov != nil {
		e.pushBlobHTTP(t, name, e.AdminKey, prov)
		m["layers"] = append(m["layers"].([]ocispec.Descriptor), ocispec.Descriptor{MediaType: registry.MediaTypeHelmProvenance, Digest: digest.FromBytes(prov), Size: int64(len(prov))})
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestChartRules: charts live only at <repository>/<chart name> under the
// tag of their version; a blob of a chart version cannot be deleted on its
// own; the provenance layer becomes the version's .prov; chart names that
// are not OCI path components stay classic-only.
func TestChartRules(t *testing.T) {
	e := setup(t)
	mustRepoIn(t, e, "charts", "private")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	prov := []byte("-----BEGIN PGP SIGNED MESSAGE-----\nfake provenance for the test\n")
	put := func(name, ref string, m []byte) *testkit.Response {
		return e.do(t, "PUT", "/v2/"+name+"/manifests/"+ref, e.AdminKey, m, "Content-Type", ocispec.MediaTypeImageManifest)
	}

	deep := chartManifest(t, e, "charts/team/web", archive, nil)
	if r := put("charts/team/web", "1.0.0", deep); r.StatusCode != 403 || ociCode(r) != "DENIED" || !strings.Contains(string(r.Body), "charts/<chart name>") {
		t.Fatalf("deeper path: %d %s", r.StatusCode, r.Body)
	}
	wrong := chartManifest(t, e, "charts/api", archive, nil)
	if r := put("charts/api", "1.0.0", wrong); r.StatusCode != 400 || ociCode(r) != "MANIFEST_INVALID" || !strings.Contains(string(r.Body), "charts/web") {
		t.Fatalf("chart under another name: %d %s", r.StatusCode, r.Body)
	}
	m := chartManifest(t, e, "charts/web", archive, prov)
	if r := put("charts/web", "2.0.0", m); r.StatusCode != 400 || ociCode(r) != "MANIFEST_INVALID" {
		t.Fatalf("tag other than the version: %d %s", r.StatusCode, r.Body)
	}
	if r := put("charts/web", "1.0.0", m); r.StatusCode != 201 {
		t.Fatalf("chart push: %d %s", r.StatusCode, r.Body)
	}
	r := e.Do(t, "GET", "/v1/repositories/charts/charts/web/1.0.0", e.AdminKey, nil)
	if r.StatusCode != 200 {
		t.Fatalf("/v1: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "GET", "/helm/charts/charts/web-1.0.0.tgz.prov", e.AdminKey, nil); r.StatusCode != 200 || string(r.Body) != string(prov) {
		t.Fatalf("provenance over the Helm protocol: %d %q", r.StatusCode, r.Body)
	}
	if r := e.do(t, "DELETE", "/v2/charts/web/blobs/"+digest.FromBytes(archive).String(), e.AdminKey, nil); r.StatusCode != 403 || ociCode(r) != "DENIED" {
		t.Fatalf("delete of a chart's blob: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "DELETE", "/v2/charts/web/manifests/1.0.0", e.AdminKey, nil); r.StatusCode != 403 || ociCode(r) != "DENIED" {
		t.Fatalf("delete of a chart's tag: %d %s", r.StatusCode, r.Body)
	}

	// A classic-only chart name (upper case) has no OCI name.
	upper := testkit.MakeChart(t, testkit.Chart{Name: "MyChart", Version: "1.0.0"})
	if r := e.Upload(t, "charts", e.AdminKey, upper, ""); r.StatusCode != 200 && r.StatusCode != 201 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "GET", "/v2/charts/MyChart/manifests/1.0.0", e.AdminKey, nil); r.StatusCode != 404 || ociCode(r) != "NAME_UNKNOWN" {
		t.Fatalf("classic-only chart: %d %s", r.StatusCode, r.Body)
	}
	var cat struct{ Repositories []string }
	e.do(t, "GET", "/v2/_catalog", e.AdminKey, nil).JSON(t, &cat)
	for _, n := range cat.Repositories {
		if strings.Contains(strings.ToLower(n), "mychart") {
			t.Fatalf("catalog lists a classic-only chart: %v", cat.Repositories)
		}
	}
}
