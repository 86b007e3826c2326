package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/registry"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// pushBlobHTTP pushes data monolithically to name and fails on error.
func (e *env) pushBlobHTTP(t testing.TB, name, key string, data []byte) digest.Digest {
	t.Helper()
	d := digest.FromBytes(data)
	r := e.do(t, "POST", "/v2/"+name+"/blobs/uploads/?digest="+d.String(), key, data, "Content-Type", "application/octet-stream")
	if r.StatusCode != 201 {
		t.Fatalf("push blob: %d %s", r.StatusCode, r.Body)
	}
	return d
}

// imageManifest returns an image manifest over config and layers.
func imageManifest(t *testing.T, config []byte, layers ...[]byte) []byte {
	t.Helper()
	m := ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest,
		Config: ocispec.Descriptor{MediaType: "application/vnd.example.config+json", Digest: digest.FromBytes(config), Size: int64(len(config))}}
	m.SchemaVersion = 2
	for _, l := range layers {
		m.Layers = append(m.Layers, ocispec.Descriptor{MediaType: ocispec.MediaTypeImageLayerGzip, Digest: digest.FromBytes(l), Size: int64(len(l))})
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (e *env) pushImage(t *testing.T, name, tag, key string) (digest.Digest, []byte) {
	t.Helper()
	config, layer := []byte(`{"name":"`+name+`"}`), []byte("layer of "+name)
	e.pushBlobHTTP(t, name, key, config)
	e.pushBlobHTTP(t, name, key, layer)
	m := imageManifest(t, config, layer)
	r := e.do(t, "PUT", "/v2/"+name+"/manifests/"+tag, key, m, "Content-Type", ocispec.MediaTypeImageManifest)
	if r.StatusCode != 201 {
		t.Fatalf("push manifest: %d %s", r.StatusCode, r.Body)
	}
	return digest.FromBytes(m), layer
}

// TestAccess covers CONTRACT §11's authorization: public repositories pull
// anonymously, private ones answer the 401 challenge to anonymous callers
// and NAME_UNKNOWN to users who cannot see them, a read-only key is
// DENIED a push, a member without maintainer rights is DENIED, and the
// catalog lists only what the caller may read.
func TestAccess(t *testing.T) {
	e := setup(t)
	mustRepoIn(t, e, "pub", "public")
	mustRepoIn(t, e, "priv", "private")
	e.pushImage(t, "pub/app", "v1", e.AdminKey)
	e.pushImage(t, "priv/app", "v1", e.AdminKey)

	if r := e.do(t, "GET", "/v2/pub/app/manifests/v1", "", nil); r.StatusCode != 200 {
		t.Fatalf("anonymous pull of public: %d %s", r.StatusCode, r.Body)
	}
	r := e.do(t, "GET", "/v2/priv/app/manifests/v1", "", nil)
	if r.StatusCode != 401 || ociCode(r) != "UNAUTHORIZED" || !strings.Contains(r.Header.Get("WWW-Authenticate"), `scope="repository:priv/app:pull"`) {
		t.Fatalf("anonymous pull of private: %d %s %s", r.StatusCode, r.Header.Get("WWW-Authenticate"), r.Body)
	}
	// The anonymous token of the token flow pulls public content only.
	var tok struct{ Token string }
	e.do(t, "GET", "/v2/token?scope=repository:pub/app:pull", "", nil).JSON(t, &tok)
	req, _ := http.NewRequest("GET", e.URL+"/v2/pub/app/manifests/v1", nil)
	req.Header.Set("Authorization", "Bearer "+tok.Token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("anonymous token pull: %v %v", err, resp)
	}
	if r := e.do(t, "POST", "/v2/pub/app/blobs/uploads/", "", nil); r.StatusCode != 401 {
		t.Fatalf("anonymous push: %d", r.StatusCode)
	}

	stranger := e.MustUser(t, "stranger@example.com", false)
	strangerKey := e.MustKey(t, stranger, chartctl.AllScopes...)
	if r := e.do(t, "GET", "/v2/priv/app/manifests/v1", strangerKey, nil); r.StatusCode != 404 || ociCode(r) != "NAME_UNKNOWN" {
		t.Fatalf("stranger pull of private: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "GET", "/v2/pub/app/manifests/v1", strangerKey, nil); r.StatusCode != 200 {
		t.Fatalf("stranger pull of public: %d", r.StatusCode)
	}
	if r := e.do(t, "POST", "/v2/pub/app/blobs/uploads/", strangerKey, nil); r.StatusCode != 403 || ociCode(r) != "DENIED" {
		t.Fatalf("stranger push to public: %d %s", r.StatusCode, r.Body)
	}
	readOnly := e.MustKey(t, e.Admin, chartctl.ScopeRepoRead)
	if r := e.do(t, "DELETE", "/v2/priv/app/manifests/v1", readOnly, nil); r.StatusCode != 403 || !strings.Contains(string(r.Body), "repo:write") {
		t.Fatalf("read-only delete: %d %s", r.StatusCode, r.Body)
	}
	noRead := e.MustKey(t, e.Admin, chartctl.ScopeTeamRead)
	if r := e.do(t, "GET", "/v2/priv/app/manifests/v1", noRead, nil); r.StatusCode != 403 || !strings.Contains(string(r.Body), "repo:read") {
		t.Fatalf("no-scope pull: %d %s", r.StatusCode, r.Body)
	}

	var cat struct{ Repositories []string }
	// An anonymous caller is challenged (as Distribution and zot do), not
	// shown the public repositories.
	if r := e.do(t, "GET", "/v2/_catalog", "", nil); r.StatusCode != 401 || ociCode(r) != "UNAUTHORIZED" ||
		!strings.Contains(r.Header.Get("WWW-Authenticate"), `realm="`+e.URL+`/v2/token"`) || strings.Contains(string(r.Body), "pub/app") {
		t.Fatalf("anonymous catalog: %d %q %s", r.StatusCode, r.Header.Get("WWW-Authenticate"), r.Body)
	}
	e.do(t, "GET", "/v2/_catalog", strangerKey, nil).JSON(t, &cat)
	if fmt.Sprint(cat.Repositories) != "[pub/app]" {
		t.Fatalf("stranger's catalog = %v", cat.Repositories)
	}
	e.do(t, "GET", "/v2/_catalog", e.AdminKey, nil).JSON(t, &cat)
	if fmt.Sprint(cat.Repositories) != "[priv/app pub/app]" {
		t.Fatalf("admin's catalog = %v", cat.Repositories)
	}
	r = e.do(t, "GET", "/v2/_catalog?n=1", e.AdminKey, nil)
	r.JSON(t, &cat)
	if fmt.Sprint(cat.Repositories) != "[priv/app]" || r.Header.Get("Link") != `</v2/_catalog?n=1&last=priv%2Fapp>; rel="next"` {
		t.Fatalf("catalog page: %v %q", cat.Repositories, r.Header.Get("Link"))
	}
}

// TestLimitsAndRefusals: an oversized manifest or blob, a manifest naming
// a blob never pushed, a wrong media type, a bad digest and a truncated
// chunk are refused with the specification's errors, and none of them
// leaves anything behind.
func TestLimitsAndRefusals(t *testing.T) {
	e := setup(t, func(r *registry.Registry) {
		r.Config.MaxManifestSize = 2048
		r.Config.MaxBlobSize = 1024
	})
	mustRepoIn(t, e, "lim", "private")
	key := e.AdminKey

	big := strings.Repeat("x", 1025)
	r := e.do(t, "POST", "/v2/lim/app/blobs/uploads/?digest="+digest.FromString(big).String(), key, []byte(big))
	if r.StatusCode != 413 || ociCode(r) != "SIZE_INVALID" {
		t.Fatalf("oversized blob: %d %s", r.StatusCode, r.Body)
	}
	r = e.do(t, "PUT", "/v2/lim/app/manifests/v1", key, []byte(`{"schemaVersion":2,"x":"`+strings.Repeat("y", 2048)+`"}`), "Content-Type", ocispec.MediaTypeImageManifest)
	if r.StatusCode != 413 || ociCode(r) != "SIZE_INVALID" {
		t.Fatalf("oversized manifest: %d %s", r.StatusCode, r.Body)
	}
	m := imageManifest(t, []byte("{}"), []byte("never pushed"))
	r = e.do(t, "PUT", "/v2/lim/app/manifests/v1", key, m, "Content-Type", ocispec.MediaTypeImageManifest)
	if r.StatusCode != 400 || ociCode(r) != "MANIFEST_BLOB_UNKNOWN" {
		t.Fatalf("missing blob: %d %s", r.StatusCode, r.Body)
	}
	r = e.do(t, "PUT", "/v2/lim/app/manifests/v1", key, m, "Content-Type", "application/vnd.example.unknown+json")
	if r.StatusCode != 400 || ociCode(r) != "MANIFEST_INVALID" {
		t.Fatalf("wrong media type: %d %s", r.StatusCode, r.Body)
	}
	r = e.do(t, "POST", "/v2/lim/app/blobs/uploads/?digest="+digest.FromString("other").String(), key, []byte("content"))
	if r.StatusCode != 400 || ociCode(r) != "DIGEST_INVALID" {
		t.Fatalf("bad digest: %d %s", r.StatusCode, r.Body)
	}
	r = e.do(t, "GET", "/v2/lim/app/blobs/sha256:nothex", key, nil)
	if r.StatusCode != 400 || ociCode(r) != "DIGEST_INVALID" {
		t.Fatalf("malformed digest: %d %s", r.StatusCode, r.Body)
	}

	// A chunk shorter than its Content-Range: refused, the session stays at
	// its last acknowledged byte and accepts the right chunk.
	r = e.do(t, "POST", "/v2/lim/app/blobs/uploads/", key, nil)
	loc := r.Header.Get("Location")
	r = e.do(t, "PATCH", loc, key, []byte("abc"), "Content-Range", "0-2", "Content-Type", "application/octet-stream")
	if r.StatusCode != 202 || r.Header.Get("Range") != "0-2" {
		t.Fatalf("first chunk: %d %s", r.StatusCode, r.Body)
	}
	loc = r.Header.Get("Location")
	r = e.do(t, "PATCH", loc, key, []byte("de"), "Content-Range", "3-5")
	if r.StatusCode != 400 || ociCode(r) != "BLOB_UPLOAD_INVALID" {
		t.Fatalf("truncated chunk: %d %s", r.StatusCode, r.Body)
	}
	r = e.do(t, "PATCH", loc, key, []byte("zz"), "Content-Range", "5-6")
	if r.StatusCode != 416 || r.Header.Get("Range") != "0-2" {
		t.Fatalf("out of order chunk: %d %s %q", r.StatusCode, r.Body, r.Header.Get("Range"))
	}
	r = e.do(t, "PATCH", loc, key, []byte("def"), "Content-Range", "3-5")
	if r.StatusCode != 202 {
		t.Fatalf("retried chunk: %d %s", r.StatusCode, r.Body)
	}
	d := digest.FromString("abcdef")
	r = e.do(t, "PUT", loc+"?digest="+d.String(), key, nil)
	if r.StatusCode != 201 {
		t.Fatalf("complete: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "GET", "/v2/lim/app/blobs/"+d.String(), key, nil); string(r.Body) != "abcdef" {
		t.Fatalf("blob = %q", r.Body)
	}
	// Nothing of the refused pushes is stored.
	ctx := context.Background()
	n := 0
	if err := e.Blobs.Walk(ctx, func(string) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d blobs stored, want only the completed one", n)
	}
	if tags, _, _ := e.Store.Tags(ctx, "lim/app", "", -1); len(tags) != 0 {
		t.Fatalf("tags = %v", tags)
	}
}

// TestRateLimits: writes count in `global` per credential and a refused
// one is TOOMANYREQUESTS with Retry-After; reads are not counted.
func TestRateLimits(t *testing.T) {
	// The repository's creation over /v1 is the credential's first write.
	e := setupServer(t, func(s *server.Server) { s.Config.GlobalLimit = ratelimit.Limit{N: 3, Window: time.Hour} })
	mustRepoIn(t, e, "rl", "private")
	e.pushBlobHTTP(t, "rl/app", e.AdminKey, []byte("one"))
	for i := 0; i < 3; i++ {
		if r := e.do(t, "GET", "/v2/rl/app/blobs/"+digest.FromString("one").String(), e.AdminKey, nil); r.StatusCode != 200 {
			t.Fatalf("read %d: %d", i, r.StatusCode)
		}
	}
	e.pushBlobHTTP(t, "rl/app", e.AdminKey, []byte("two"))
	r := e.do(t, "POST", "/v2/rl/app/blobs/uploads/", e.AdminKey, nil)
	if r.StatusCode != 429 || ociCode(r) != "TOOMANYREQUESTS" || r.Header.Get("Retry-After") == "" || r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("third write: %d %s %v", r.StatusCode, r.Body, r.Header)
	}
}

// TestLinkWithoutBlob: a blob's link and its bytes are made durable at
// the same time, so a crash during an upload (never acknowledged) can
// leave a link to bytes that were never stored. Such a link is harmless:
// the blob is unknown to reads, a manifest referring to it is refused
// (image and chart alike), and pushing the blob again repairs it.
func TestLinkWithoutBlob(t *testing.T) {
	e := setup(t)
	mustRepoIn(t, e, "apps", "private")
	ctx := context.Background()
	config, layer := []byte(`{"name":"dangling"}`), []byte("a layer")
	d := digest.FromBytes(config)
	for _, name := range []string{"apps/img", "apps/web", "apps/left"} {
		if err := e.Reg.OCI.LinkBlob(ctx, name, d.String(), int64(len(config))); err != nil {
			t.Fatal(err)
		}
		if r := e.do(t, "HEAD", "/v2/"+name+"/blobs/"+d.String(), e.AdminKey, nil); r.StatusCode != 404 {
			t.Fatalf("HEAD of a linked blob never stored: %d", r.StatusCode)
		}
	}

	e.pushBlobHTTP(t, "apps/img", e.AdminKey, layer)
	m := imageManifest(t, config, layer)
	r := e.do(t, "PUT", "/v2/apps/img/manifests/v1", e.AdminKey, m, "Content-Type", ocispec.MediaTypeImageManifest)
	if r.StatusCode != 400 || ociCode(r) != "MANIFEST_BLOB_UNKNOWN" || !strings.Contains(string(r.Body), d.String()) {
		t.Fatalf("image manifest over a blob never stored: %d %s", r.StatusCode, r.Body)
	}

	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	e.pushBlobHTTP(t, "apps/web", e.AdminKey, archive)
	cm, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"config":        ocispec.Descriptor{MediaType: registry.MediaTypeHelmConfig, Digest: d, Size: int64(len(config))},
		"layers":        []ocispec.Descriptor{{MediaType: registry.MediaTypeHelmChart, Digest: digest.FromBytes(archive), Size: int64(len(archive))}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r = e.do(t, "PUT", "/v2/apps/web/manifests/1.0.0", e.AdminKey, cm, "Content-Type", ocispec.MediaTypeImageManifest)
	if r.StatusCode != 400 || ociCode(r) != "MANIFEST_BLOB_UNKNOWN" {
		t.Fatalf("chart manifest over a config never stored: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "GET", "/helm/apps/index.yaml", e.AdminKey, nil); strings.Contains(string(r.Body), "web") {
		t.Fatalf("a refused chart push is in the index:\n%s", r.Body)
	}

	// Pushed for real, the same blob completes both pushes.
	e.pushBlobHTTP(t, "apps/img", e.AdminKey, config)
	e.pushBlobHTTP(t, "apps/web", e.AdminKey, config)
	if r := e.do(t, "PUT", "/v2/apps/img/manifests/v1", e.AdminKey, m, "Content-Type", ocispec.MediaTypeImageManifest); r.StatusCode != 201 {
		t.Fatalf("image manifest after the blob was pushed: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "PUT", "/v2/apps/web/manifests/1.0.0", e.AdminKey, cm, "Content-Type", ocispec.MediaTypeImageManifest); r.StatusCode != 201 {
		t.Fatalf("chart manifest after the config was pushed: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "GET", "/v2/apps/web/blobs/"+d.String(), e.AdminKey, nil); r.StatusCode != 200 || string(r.Body) != string(config) {
		t.Fatalf("config: %d %q", r.StatusCode, r.Body)
	}

	// Never repaired, the link is collected past the grace period; the
	// links the manifests use stay, and so does the blob.
	e.Reg.Now = func() time.Time { return time.Now().Add(e.Reg.Config.GCGrace + time.Minute) }
	rep, err := e.Reg.CollectGarbage(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rep.Links, "apps/left@"+d.String()) || slices.Contains(rep.Links, "apps/img@"+d.String()) || slices.Contains(rep.Links, "apps/web@"+d.String()) {
		t.Fatalf("collected links %v", rep.Links)
	}
	if _, err := e.Reg.OCI.BlobLink(ctx, "apps/left", d.String()); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("link without a blob after collection: %v", err)
	}
	if r := e.do(t, "GET", "/v2/apps/img/blobs/"+d.String(), e.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("config after collection: %d", r.StatusCode)
	}
}

// statCounter counts the registry's checks that a blob is stored
// (ModTime: a HEAD on S3), per digest.
type statCounter struct {
	chartctl.AlgorithmBlobStore
	mu    sync.Mutex
	stats map[string]int
}

func (s *statCounter) ModTime(ctx context.Context, d string) (time.Time, error) {
	s.mu.Lock()
	s.stats[d]++
	s.mu.Unlock()
	return s.AlgorithmBlobStore.ModTime(ctx, d)
}

// helmChartManifest is the manifest Helm pushes for a chart: config (with
// digest cd) and the archive (with digest ad) as its one layer.
func helmChartManifest(t *testing.T, config []byte, cd digest.Digest, archive []byte, ad digest.Digest) []byte {
	t.Helper()
	m, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"config":        ocispec.Descriptor{MediaType: registry.MediaTypeHelmConfig, Digest: cd, Size: int64(len(config))},
		"layers":        []ocispec.Descriptor{{MediaType: registry.MediaTypeHelmChart, Digest: ad, Size: int64(len(archive))}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// linkCounter counts the registry's lookups of blob links, per digest.
type linkCounter struct {
	chartctl.OCIStore
	mu    sync.Mutex
	links map[string]int
}

func (l *linkCounter) BlobLink(ctx context.Context, name, d string) (*chartctl.OCIBlobLink, error) {
	l.mu.Lock()
	l.links[d]++
	l.mu.Unlock()
	return l.OCIStore.BlobLink(ctx, name, d)
}

func (l *linkCounter) count(d digest.Digest) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.links[d.String()]
}

func (s *statCounter) count(d digest.Digest) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats[d.String()]
}

// TestFreshBlobsNotAskedAgain: a manifest pushed right after its blobs,
// to the server that committed them, is stored without asking the blob
// store whether they are there (no process deletes a blob younger than
// the grace period); once half the grace period has passed it asks
// again.
func TestFreshBlobsNotAskedAgain(t *testing.T) {
	var (
		sc *statCounter
		lc *linkCounter
	)
	e := setup(t, func(r *registry.Registry) {
		sc = &statCounter{AlgorithmBlobStore: r.Blobs, stats: map[string]int{}}
		r.Blobs = sc
		lc = &linkCounter{OCIStore: r.OCI, links: map[string]int{}}
		r.OCI = lc
	})
	mustRepoIn(t, e, "apps", "private")
	config, layer := []byte(`{"fresh":true}`), []byte("a fresh layer")
	cd, ld := e.pushBlobHTTP(t, "apps/img", e.AdminKey, config), e.pushBlobHTTP(t, "apps/img", e.AdminKey, layer)
	m := imageManifest(t, config, layer)
	if r := e.do(t, "PUT", "/v2/apps/img/manifests/v1", e.AdminKey, m, "Content-Type", ocispec.MediaTypeImageManifest); r.StatusCode != 201 {
		t.Fatalf("manifest: %d %s", r.StatusCode, r.Body)
	}
	if n, k := sc.count(cd), sc.count(ld); n != 0 || k != 0 {
		t.Fatalf("the blob store was asked for blobs just committed: config %d, layer %d", n, k)
	}

	// A chart's blobs likewise.
	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	ad := e.pushBlobHTTP(t, "apps/web", e.AdminKey, archive)
	hc := []byte(`{"name":"web","version":"1.0.0"}`)
	hd := e.pushBlobHTTP(t, "apps/web", e.AdminKey, hc)
	cm := helmChartManifest(t, hc, hd, archive, ad)
	if r := e.do(t, "PUT", "/v2/apps/web/manifests/1.0.0", e.AdminKey, cm, "Content-Type", ocispec.MediaTypeImageManifest); r.StatusCode != 201 {
		t.Fatalf("chart manifest: %d %s", r.StatusCode, r.Body)
	}
	if n, k := sc.count(ad), sc.count(hd); n != 0 || k != 0 {
		t.Fatalf("the blob store was asked for a chart's blobs just committed: archive %d, config %d", n, k)
	}
	// Nor the store of OCI records for the links just committed (the
	// version's transaction checks them).
	if n, k := lc.count(ad), lc.count(hd); n != 0 || k != 0 {
		t.Fatalf("the links just committed were looked up: archive %d, config %d", n, k)
	}

	// Half the grace period later the same blobs are asked for.
	e.Reg.Now = func() time.Time { return time.Now().Add(e.Reg.Config.GCGrace/2 + time.Second) }
	m2 := imageManifest(t, config, layer, []byte("another layer"))
	e.pushBlobHTTP(t, "apps/img", e.AdminKey, []byte("another layer"))
	if r := e.do(t, "PUT", "/v2/apps/img/manifests/v2", e.AdminKey, m2, "Content-Type", ocispec.MediaTypeImageManifest); r.StatusCode != 201 {
		t.Fatalf("second manifest: %d %s", r.StatusCode, r.Body)
	}
	if n, k := sc.count(cd), sc.count(ld); n == 0 || k == 0 {
		t.Fatalf("blobs committed before half the grace period were not asked for: config %d, layer %d", n, k)
	}
	// And a chart manifest naming links committed that long ago looks
	// them up.
	archive2 := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.1"})
	e.Reg.Now = time.Now
	ad2 := e.pushBlobHTTP(t, "apps/web", e.AdminKey, archive2)
	e.Reg.Now = func() time.Time { return time.Now().Add(e.Reg.Config.GCGrace/2 + time.Second) }
	cm2 := helmChartManifest(t, hc, hd, archive2, ad2)
	if r := e.do(t, "PUT", "/v2/apps/web/manifests/1.0.1", e.AdminKey, cm2, "Content-Type", ocispec.MediaTypeImageManifest); r.StatusCode != 201 {
		t.Fatalf("second chart manifest: %d %s", r.StatusCode, r.Body)
	}
	if n := lc.count(ad2); n == 0 {
		t.Fatal("a link committed before half the grace period was not looked up")
	}

	// A fresh link removed before its manifest comes: the version's
	// transaction finds it gone, and nothing is stored.
	e.Reg.Now = time.Now
	archive3 := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.2"})
	ad3 := e.pushBlobHTTP(t, "apps/web", e.AdminKey, archive3)
	if err := e.Reg.OCI.UnlinkBlob(context.Background(), "apps/web", ad3.String()); err != nil {
		t.Fatal(err)
	}
	cm3 := helmChartManifest(t, hc, hd, archive3, ad3)
	r := e.do(t, "PUT", "/v2/apps/web/manifests/1.0.2", e.AdminKey, cm3, "Content-Type", ocispec.MediaTypeImageManifest)
	if r.StatusCode != 400 || !strings.Contains(string(r.Body), "MANIFEST_BLOB_UNKNOWN") {
		t.Fatalf("manifest naming a link removed meanwhile: %d %s", r.StatusCode, r.Body)
	}
	if _, err := e.App().Store.ChartVersion(context.Background(), "apps", "web", "1.0.2"); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("the version was stored without its layer's link: %v", err)
	}
}
