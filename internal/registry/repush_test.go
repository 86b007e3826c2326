package registry_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/chartctl/chartctl/internal/registry"
	"github.com/chartctl/chartctl/internal/testkit"
)

// TestHelmPushOfV1Upload: a chart uploaded over /v1 is then `helm push`ed
// with the same archive. Helm finds the config and chart blobs there (the
// version's derived ones) and skips them, then PUTs its own manifest,
// whose digest differs from the derived one. The push is the idempotent
// success it is within one protocol (decision 10): the version keeps both
// manifests, the tag names the first (the derived one), Helm's digest
// pulls, and deleting by it deletes the version.
func TestHelmPushOfV1Upload(t *testing.T) {
	for name, base := range testkit.Helms(t) {
		t.Run(name, func(t *testing.T) {
			e := setup(t)
			mustRepoIn(t, e, "r", "private")
			host := strings.TrimPrefix(e.URL, "http://")
			h := base.Fresh(t)
			archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
			if r := e.Upload(t, "r", e.AdminKey, archive, ""); r.StatusCode != 200 && r.StatusCode != 201 {
				t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
			}
			derived := e.do(t, "HEAD", "/v2/r/web/manifests/1.0.0", e.AdminKey, nil).Header.Get("Docker-Content-Digest")
			h.Must("registry", "login", host, "--username", "ci", "--password", e.AdminKey, "--plain-http")
			out, err := h.Run("push", h.Write("web-1.0.0.tgz", archive), "oci://"+host+"/r", "--plain-http")
			if err != nil {
				t.Fatalf("helm push of the /v1 upload: %v\n%s", err, out)
			}
			m := digestRE.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("push output has no digest:\n%s", out)
			}
			if r := e.do(t, "HEAD", "/v2/r/web/manifests/1.0.0", e.AdminKey, nil); r.Header.Get("Docker-Content-Digest") != derived {
				t.Fatalf("the tag moved: %s, want the first manifest %s", r.Header.Get("Docker-Content-Digest"), derived)
			}
			if r := e.do(t, "GET", "/v2/r/web/manifests/"+m[1], e.AdminKey, nil); r.StatusCode != 200 {
				t.Fatalf("Helm's manifest by digest: %d %s", r.StatusCode, r.Body)
			}
			if got, err := pull(t, h, "oci://"+host+"/r/web", "1.0.0"); err != nil || !bytes.Equal(got, archive) {
				t.Fatalf("pull: %v (%d bytes)", err, len(got))
			}
			// Pushing again changes nothing.
			h.Must("push", h.Write("again/web-1.0.0.tgz", archive), "oci://"+host+"/r", "--plain-http")
			var list struct{ Data []struct{ Version string } }
			e.Do(t, "GET", "/v1/repositories/r/charts/web", e.AdminKey, nil).JSON(t, &list)
			if len(list.Data) != 1 {
				t.Fatalf("versions after the pushes: %+v", list.Data)
			}
			// Deleting by Helm's digest deletes the version, and both
			// manifests with it.
			if r := e.do(t, "DELETE", "/v2/r/web/manifests/"+m[1], e.AdminKey, nil); r.StatusCode != 202 {
				t.Fatalf("delete by Helm's digest: %d %s", r.StatusCode, r.Body)
			}
			if r := e.Do(t, "GET", "/v1/repositories/r/charts/web/1.0.0", e.AdminKey, nil); r.StatusCode != 404 {
				t.Fatalf("/v1 after deleting Helm's manifest: %d", r.StatusCode)
			}
			for _, d := range []string{m[1], derived} {
				if r := e.do(t, "GET", "/v2/r/web/manifests/"+d, e.AdminKey, nil); r.StatusCode != 404 {
					t.Fatalf("manifest %s after the delete: %d", d, r.StatusCode)
				}
			}
		})
	}
}

// TestRepushOverOCIOfV1Upload replays Helm's push of a chart uploaded over
// /v1 in plain HTTP: HEAD of the config and chart blobs (both found, so
// not uploaded), then PUT of a manifest whose annotations make its digest
// differ from the derived one. It is stored beside the derived one.
func TestRepushOverOCIOfV1Upload(t *testing.T) {
	e := setup(t)
	mustRepoIn(t, e, "r", "private")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	if r := e.Upload(t, "r", e.AdminKey, archive, ""); r.StatusCode != 200 && r.StatusCode != 201 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	r := e.do(t, "GET", "/v2/r/web/manifests/1.0.0", e.AdminKey, nil)
	derived := r.Header.Get("Docker-Content-Digest")
	var doc ocispec.Manifest
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	for _, d := range append([]ocispec.Descriptor{doc.Config}, doc.Layers...) {
		if r := e.do(t, "HEAD", "/v2/r/web/blobs/"+d.Digest.String(), e.AdminKey, nil); r.StatusCode != 200 {
			t.Fatalf("HEAD blob %s (%s): %d", d.Digest, d.MediaType, r.StatusCode)
		}
	}
	doc.Annotations = map[string]string{"org.opencontainers.image.created": "2026-11-28T00:00:00Z", ocispec.AnnotationTitle: "web"}
	doc.MediaType = ocispec.MediaTypeImageManifest
	m, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	helmDigest := digest.FromBytes(m)
	if helmDigest.String() == derived {
		t.Fatal("the replayed manifest is the derived one")
	}
	r = e.do(t, "PUT", "/v2/r/web/manifests/1.0.0", e.AdminKey, m, "Content-Type", ocispec.MediaTypeImageManifest)
	if r.StatusCode != 201 || r.Header.Get("Docker-Content-Digest") != helmDigest.String() {
		t.Fatalf("PUT of Helm's manifest: %d %q %s", r.StatusCode, r.Header.Get("Docker-Content-Digest"), r.Body)
	}
	if r := e.do(t, "PUT", "/v2/r/web/manifests/1.0.0", e.AdminKey, m, "Content-Type", ocispec.MediaTypeImageManifest); r.StatusCode != 201 {
		t.Fatalf("PUT again: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "HEAD", "/v2/r/web/manifests/1.0.0", e.AdminKey, nil); r.Header.Get("Docker-Content-Digest") != derived {
		t.Fatalf("the tag moved to %s", r.Header.Get("Docker-Content-Digest"))
	}
	r = e.do(t, "GET", "/v2/r/web/manifests/"+helmDigest.String(), e.AdminKey, nil)
	if r.StatusCode != 200 || !bytes.Equal(r.Body, m) {
		t.Fatalf("GET Helm's manifest: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "GET", "/v2/r/web/blobs/"+doc.Layers[0].Digest.String(), e.AdminKey, nil); !bytes.Equal(r.Body, archive) {
		t.Fatalf("the chart layer: %d (%d bytes)", r.StatusCode, len(r.Body))
	}
	// Still one version, with its archive; the quota counts it once.
	var q struct {
		Data struct {
			UsedBytes    int `json:"used_bytes"`
			UsedVersions int `json:"used_versions"`
		}
	}
	e.Do(t, "GET", "/v1/repositories/r/quota", e.AdminKey, nil).JSON(t, &q)
	if q.Data.UsedVersions != 1 || q.Data.UsedBytes != len(archive) {
		t.Fatalf("usage after the re-push: %+v, want 1 version of %d bytes", q.Data, len(archive))
	}
	// Deleting the version over /v1 deletes Helm's manifest too.
	if r := e.Do(t, "DELETE", "/v1/repositories/r/charts/web/1.0.0", e.AdminKey, nil); r.StatusCode != 200 && r.StatusCode != 204 {
		t.Fatalf("/v1 delete: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "GET", "/v2/r/web/manifests/"+helmDigest.String(), e.AdminKey, nil); r.StatusCode != 404 {
		t.Fatalf("Helm's manifest after the version's deletion: %d", r.StatusCode)
	}
	if doc.Config.MediaType != registry.MediaTypeHelmConfig {
		t.Fatalf("derived config media type %q", doc.Config.MediaType)
	}
}
