package registry_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// A chart's layer and provenance file pulled over OCI, from memory (the
// application layer's cache of small blobs) and from files: whole, in
// ranges, HEAD and If-None-Match alike; once the chart version is deleted
// its blobs are no longer served.
func TestBlobDownloads(t *testing.T) {
	for _, size := range []int64{server.DefaultBlobCacheSize, 0} {
		t.Run("cache="+strconv.FormatInt(size, 10), func(t *testing.T) {
			e := setupServer(t, func(s *server.Server) { s.Config.BlobCacheSize = size })
			mustRepoIn(t, e, "pub", "public")
			archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
			if r := e.Upload(t, "pub", e.AdminKey, archive, ""); r.StatusCode != 200 {
				t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
			}
			m := e.do(t, "GET", "/v2/pub/web/manifests/1.0.0", "", nil)
			if m.StatusCode != 200 {
				t.Fatalf("manifest: %d %s", m.StatusCode, m.Body)
			}
			var man struct {
				Config struct{ Digest string }
				Layers []struct{ Digest string }
			}
			if err := json.Unmarshal(m.Body, &man); err != nil {
				t.Fatal(err)
			}
			path := "/v2/pub/web/blobs/" + man.Layers[0].Digest
			for round := range 2 { // the second round from memory, when kept
				r := e.do(t, "GET", path, "", nil)
				if r.StatusCode != 200 || !bytes.Equal(r.Body, archive) {
					t.Fatalf("round %d: %d, %d bytes", round, r.StatusCode, len(r.Body))
				}
				for k, want := range map[string]string{
					"Docker-Content-Digest": man.Layers[0].Digest, "ETag": `"` + man.Layers[0].Digest + `"`,
					"Content-Length": strconv.Itoa(len(archive)), "Content-Type": "application/octet-stream", "Accept-Ranges": "bytes",
				} {
					if got := r.Header.Values(k); len(got) != 1 || got[0] != want {
						t.Errorf("round %d: %s = %q, want %q", round, k, got, want)
					}
				}
				r = e.do(t, "GET", path, "", nil, "Range", "bytes=3-9")
				if r.StatusCode != 206 || !bytes.Equal(r.Body, archive[3:10]) || r.Header.Get("Content-Range") != "bytes 3-9/"+strconv.Itoa(len(archive)) {
					t.Fatalf("round %d range: %d %q %q", round, r.StatusCode, r.Body, r.Header.Get("Content-Range"))
				}
				if r = e.do(t, "HEAD", path, "", nil); r.StatusCode != 200 || len(r.Body) != 0 || r.Header.Get("Content-Length") != strconv.Itoa(len(archive)) {
					t.Fatalf("round %d HEAD: %d %v", round, r.StatusCode, r.Header)
				}
				if r = e.do(t, "GET", path, "", nil, "If-None-Match", `"`+man.Layers[0].Digest+`"`); r.StatusCode != 304 {
					t.Fatalf("round %d If-None-Match: %d", round, r.StatusCode)
				}
				if r = e.do(t, "GET", "/v2/pub/web/blobs/"+man.Config.Digest, "", nil); r.StatusCode != 200 || r.Header.Get("Docker-Content-Digest") != man.Config.Digest {
					t.Fatalf("round %d config: %d", round, r.StatusCode)
				}
			}
			if st := e.App().BlobCacheStats(); (size > 0) != (st.Hits > 0) {
				t.Errorf("cache of %d bytes: %+v", size, st)
			}
			if r := e.do(t, "DELETE", "/v1/repositories/pub/charts/web/1.0.0", "", nil); r.StatusCode != 401 {
				t.Fatalf("anonymous delete: %d", r.StatusCode)
			}
			if r := e.Do(t, "DELETE", "/v1/repositories/pub/charts/web/1.0.0", e.AdminKey, nil); r.StatusCode != 200 {
				t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
			}
			if r := e.do(t, "GET", path, "", nil); r.StatusCode != 404 || ociCode(r) != "BLOB_UNKNOWN" {
				t.Fatalf("blob of the deleted chart: %d %s", r.StatusCode, r.Body)
			}
		})
	}
}

// A chart uploaded over /v1 has no stored tag or manifest, which a pull by
// tag remembers; a push over OCI of the same version is pulled by the very
// next request all the same, and a tag pushed to another name at once.
func TestPullSeesAPushAtOnce(t *testing.T) {
	e := setupServer(t, func(s *server.Server) { s.Config.AllowOverwrite = true })
	mustRepoIn(t, e, "pub", "public")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	if r := e.Upload(t, "pub", e.AdminKey, archive, ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	derived := e.do(t, "GET", "/v2/pub/web/manifests/1.0.0", "", nil)
	if derived.StatusCode != 200 {
		t.Fatalf("derived manifest: %d %s", derived.StatusCode, derived.Body)
	}
	if r := e.do(t, "GET", "/v2/pub/other/manifests/v1", "", nil); r.StatusCode != 404 {
		t.Fatalf("a tag never pushed: %d", r.StatusCode)
	}

	// The same chart pushed over OCI with a provenance layer: its manifest
	// is stored and is the one pulled from now on.
	prov := []byte("-----BEGIN PGP SIGNED MESSAGE-----\nprovenance\n")
	m := chartManifest(t, e, "pub/web", archive, prov)
	if r := e.do(t, "PUT", "/v2/pub/web/manifests/1.0.0", e.AdminKey, m, "Content-Type", "application/vnd.oci.image.manifest.v1+json"); r.StatusCode != 201 {
		t.Fatalf("push: %d %s", r.StatusCode, r.Body)
	}
	pulled := e.do(t, "GET", "/v2/pub/web/manifests/1.0.0", "", nil)
	if pulled.StatusCode != 200 || !bytes.Equal(pulled.Body, m) {
		t.Fatalf("pull after push: %d, the derived manifest again: %v", pulled.StatusCode, bytes.Equal(pulled.Body, derived.Body))
	}

	// Any manifest tagged in a name not tagged before.
	config := []byte(`{}`)
	e.pushBlobHTTP(t, "pub/other", e.AdminKey, config)
	img := []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"` + digest.FromBytes(config).String() + `","size":2},"layers":[]}`)
	if r := e.do(t, "PUT", "/v2/pub/other/manifests/v1", e.AdminKey, img, "Content-Type", "application/vnd.oci.image.manifest.v1+json"); r.StatusCode != 201 {
		t.Fatalf("push image: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "GET", "/v2/pub/other/manifests/v1", "", nil); r.StatusCode != 200 || !bytes.Equal(r.Body, img) {
		t.Fatalf("pull of the new tag: %d %s", r.StatusCode, r.Body)
	}
}

// A small blob is kept in memory once pushed: its first pull, and the
// read of a chart's layer when its manifest is pushed, do not go back to
// the blob store. With the cache off, nothing is kept.
func TestPushedBlobsServedFromMemory(t *testing.T) {
	for _, size := range []int64{server.DefaultBlobCacheSize, 0} {
		t.Run(fmt.Sprintf("cache-%d", size), func(t *testing.T) {
			e := setupServer(t, func(s *server.Server) { s.Config.BlobCacheSize = size })
			mustRepoIn(t, e, "pub", "public")
			archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
			m := chartManifest(t, e, "pub/web", archive, nil) // pushes the config and the layer
			kept := 0
			if size > 0 {
				kept = 2
			}
			if st := e.App().BlobCacheStats(); st.Blobs != kept || st.Hits != 0 || st.Misses != 0 {
				t.Fatalf("after the blob pushes: %+v, want %d blobs kept and no reads", st, kept)
			}
			if r := e.do(t, "PUT", "/v2/pub/web/manifests/1.0.0", e.AdminKey, m, "Content-Type", ocispec.MediaTypeImageManifest); r.StatusCode != 201 {
				t.Fatalf("manifest: %d %s", r.StatusCode, r.Body)
			}
			r := e.do(t, "GET", "/v2/pub/web/blobs/"+digest.FromBytes(archive).String(), "", nil)
			if r.StatusCode != 200 || !bytes.Equal(r.Body, archive) {
				t.Fatalf("layer: %d, %d bytes", r.StatusCode, len(r.Body))
			}
			// The layer was read twice (validation, pull): from memory.
			if st := e.App().BlobCacheStats(); size > 0 && (st.Hits != 2 || st.Misses != 0) {
				t.Fatalf("after the manifest push and a pull: %+v, want 2 hits and no miss", st)
			}
		})
	}
}
