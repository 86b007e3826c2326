package ociclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/ociclient"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/disttest"
	"github.com/chartctl/chartctl/internal/testkit/servetest"
)

// pushChart pushes a Helm chart (config, archive, manifest) to repo
// under its version and returns the manifest's descriptor and the
// archive's.
func pushChart(t *testing.T, c *ociclient.Client, repo, name, version string) (ociclient.Descriptor, ociclient.Descriptor, []byte) {
	t.Helper()
	ctx := context.Background()
	oc, err := testkit.NewOCIChart(name, version, testkit.MakeChart(t, testkit.Chart{Name: name, Version: version}))
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(oc.Manifest, &m); err != nil {
		t.Fatal(err)
	}
	if err := c.PushBlob(ctx, repo, m.Config, bytes.NewReader(oc.Config)); err != nil {
		t.Fatalf("push config: %v", err)
	}
	if err := c.PushBlob(ctx, repo, m.Layers[0], bytes.NewReader(oc.Archive)); err != nil {
		t.Fatalf("push archive: %v", err)
	}
	d, err := c.PushManifest(ctx, repo, oc.Tag, ocispec.MediaTypeImageManifest, oc.Manifest)
	if err != nil {
		t.Fatalf("push manifest: %v", err)
	}
	return d, m.Layers[0], oc.Archive
}

// pushReferrer pushes an artifact whose subject is subject, tagged tag
// ("" for none), and returns its descriptor.
func pushReferrer(t *testing.T, c *ociclient.Client, repo, tag, artifactType string, subject *ociclient.Descriptor, payload []byte) ociclient.Descriptor {
	t.Helper()
	ctx := context.Background()
	layer := ocispec.Descriptor{MediaType: "application/vnd.example.signature", Digest: digest.FromBytes(payload), Size: int64(len(payload))}
	if err := c.PushBlob(ctx, repo, layer, bytes.NewReader(payload)); err != nil {
		t.Fatalf("push signature layer: %v", err)
	}
	empty := ocispec.DescriptorEmptyJSON
	if err := c.PushBlob(ctx, repo, empty, bytes.NewReader(empty.Data)); err != nil {
		t.Fatalf("push empty config: %v", err)
	}
	m := ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		ArtifactType: artifactType, Config: ocispec.Descriptor{MediaType: empty.MediaType, Digest: empty.Digest, Size: empty.Size},
		Layers: []ocispec.Descriptor{layer}, Subject: subject}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.PushManifest(ctx, repo, tag, ocispec.MediaTypeImageManifest, b)
	if err != nil {
		t.Fatalf("push referrer: %v", err)
	}
	return d
}

// exercise runs every operation of the client against one registry:
// push (blobs, manifest), read back byte for byte, tags and catalog
// across Link pages, referrers (API or tag schema, and cosign's .sig
// tag), a cross-repository mount, and a delete.
func exercise(t *testing.T, c *ociclient.Client, ns, copyNS string, anon *ociclient.Client) {
	ctx := context.Background()
	repo := ns + "/web"
	var manifests []ociclient.Descriptor
	var archive []byte
	var layer ociclient.Descriptor
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		var d ociclient.Descriptor
		d, layer, archive = pushChart(t, c, repo, "web", v)
		manifests = append(manifests, d)
	}
	if _, _, err := c.Manifest(ctx, repo, "9.9.9"); !errors.Is(err, ociclient.ErrNotFound) || !ociclient.IsNotFound(err) {
		t.Fatalf("missing tag: %v; want ErrNotFound", err)
	}

	// Manifest by tag and by digest, HEAD by tag: the same descriptor.
	d, body, err := c.Manifest(ctx, repo, "2.0.0")
	if err != nil || d.Digest != manifests[2].Digest || digest.FromBytes(body) != d.Digest || d.MediaType != ocispec.MediaTypeImageManifest {
		t.Fatalf("manifest by tag: %+v, %v; want %s", d, err, manifests[2].Digest)
	}
	if d2, body2, err := c.Manifest(ctx, repo, d.Digest.String()); err != nil || d2.Digest != d.Digest || !bytes.Equal(body, body2) {
		t.Fatalf("manifest by digest: %+v, %v", d2, err)
	}
	if h, err := c.HeadManifest(ctx, repo, "2.0.0"); err != nil || h.Digest != d.Digest || h.Size != int64(len(body)) {
		t.Fatalf("head manifest: %+v, %v", h, err)
	}

	// Blob, streamed and verified; with and without a known size.
	for _, want := range []ociclient.Descriptor{layer, {Digest: layer.Digest}} {
		rc, err := c.Blob(ctx, repo, want)
		if err != nil {
			t.Fatalf("blob: %v", err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, archive) {
			t.Fatalf("blob: %d bytes, %v; want the %d archive bytes", len(got), err, len(archive))
		}
	}
	if ok, err := c.BlobExists(ctx, repo, layer); err != nil || !ok {
		t.Fatalf("blob exists: %v, %v", ok, err)
	}

	// Tags and catalog, two to a page.
	tags, err := c.Tags(ctx, repo)
	if slices.Sort(tags); err != nil || !slices.Equal(tags, []string{"1.0.0", "1.1.0", "2.0.0"}) {
		t.Fatalf("tags = %v, %v", tags, err)
	}
	pushChart(t, c, ns+"/api", "api", "0.1.0")
	cat, err := c.Catalog(ctx)
	if err != nil || !slices.Contains(cat, repo) || !slices.Contains(cat, ns+"/api") {
		t.Fatalf("catalog = %v, %v; want %s and %s/api", cat, err, repo, ns)
	}

	// Referrers: an OCI 1.1 signature (the referrers API where the
	// registry has one, else the sha256-<hex> index oras maintains) and a
	// cosign-style signature under sha256-<hex>.sig.
	sig := pushReferrer(t, c, repo, "", "application/vnd.example.signature", &d, []byte("signature one"))
	cosignTag := "sha256-" + d.Digest.Encoded() + ".sig"
	cosign := pushReferrer(t, c, repo, cosignTag, "", nil, []byte("cosign signature"))
	refs, err := c.Referrers(ctx, repo, d)
	if err != nil {
		t.Fatalf("referrers: %v", err)
	}
	var sawSig, sawCosign bool
	for _, r := range refs {
		sawSig = sawSig || (r.Digest == sig.Digest && r.ArtifactType == "application/vnd.example.signature" && r.Tag == "")
		sawCosign = sawCosign || (r.Digest == cosign.Digest && r.Tag == cosignTag)
	}
	if !sawSig || !sawCosign {
		t.Fatalf("referrers = %+v; want the OCI signature %s and the cosign tag %s", refs, sig.Digest, cosignTag)
	}
	if refs, err := c.Referrers(ctx, repo, manifests[0]); err != nil || len(refs) != 0 {
		t.Fatalf("referrers of an unsigned manifest = %+v, %v; want none", refs, err)
	}

	// A blob mounted into another repository, then its manifest.
	copyRepo := copyNS + "/web"
	var m ocispec.Manifest
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	for _, b := range append([]ociclient.Descriptor{m.Config}, m.Layers...) {
		if err := c.MountBlob(ctx, copyRepo, repo, b, nil); err != nil {
			t.Fatalf("mount %s: %v", b.Digest, err)
		}
	}
	if cd, err := c.PushManifest(ctx, copyRepo, "2.0.0", d.MediaType, body); err != nil || cd.Digest != d.Digest {
		t.Fatalf("push the manifest beside the mounted blobs: %+v, %v", cd, err)
	}

	// Delete by tag.
	if err := c.DeleteManifest(ctx, copyRepo, "2.0.0"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := c.HeadManifest(ctx, copyRepo, d.Digest.String()); !ociclient.IsNotFound(err) {
		t.Fatalf("deleted manifest: %v; want not found", err)
	}

	if anon != nil {
		if _, err := anon.Tags(ctx, repo); !errors.Is(err, ociclient.ErrUnauthorized) {
			t.Fatalf("anonymous tags of a protected registry: %v; want 401", err)
		}
	}
}

func newClient(t *testing.T, o ociclient.Options) *ociclient.Client {
	t.Helper()
	o.AllowPrivate, o.PlainHTTP, o.PageSize = true, true, 2
	c, err := ociclient.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDistributionAnonymous runs the client against CNCF Distribution
// without authentication.
func TestDistributionAnonymous(t *testing.T) {
	reg := disttest.Start(t, disttest.Options{})
	exercise(t, newClient(t, ociclient.Options{Host: reg.Host}), "charts", "copies", nil)
}

// TestDistributionBasic runs the client against CNCF Distribution behind
// htpasswd Basic auth; without the credential it is refused.
func TestDistributionBasic(t *testing.T) {
	reg := disttest.Start(t, disttest.Options{Username: "ci", Password: "s3cret"})
	exercise(t, newClient(t, ociclient.Options{Host: reg.Host, Username: "ci", Password: "s3cret"}), "charts", "copies",
		newClient(t, ociclient.Options{Host: reg.Host}))
}

// TestChartctlBearer runs the client against chartctl's own /v2, whose
// 401 is a Bearer challenge naming its /v2/token realm, service and
// scope (the flow of GHCR, Docker Hub and Harbor): the credential is
// exchanged for a token there.
func TestChartctlBearer(t *testing.T) {
	url, key := servetest.Start(t)
	mustRepo(t, url, key, "acme", "private")
	mustRepo(t, url, key, "copies", "private")
	host := strings.TrimPrefix(url, "http://")
	exercise(t, newClient(t, ociclient.Options{Host: host, Username: "ci", Password: key}), "acme", "copies",
		newClient(t, ociclient.Options{Host: host}))
}

// mustRepo creates a chartctl repository over /v1.
func mustRepo(t *testing.T, url, key, name, visibility string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"name": name, "visibility": visibility})
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/repositories", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("create repository %s: %d %s", name, resp.StatusCode, body)
	}
}

// TestChartctlAnonymousPull reads a public chartctl repository with no
// credential: the anonymous token flow.
func TestChartctlAnonymousPull(t *testing.T) {
	url, key := servetest.Start(t)
	mustRepo(t, url, key, "pub", "public")
	push := newClient(t, ociclient.Options{Host: strings.TrimPrefix(url, "http://"), Username: "ci", Password: key})
	pushChart(t, push, "pub/app", "app", "1.2.3")
	c := newClient(t, ociclient.Options{Host: strings.TrimPrefix(url, "http://")})
	tags, err := c.Tags(context.Background(), "pub/app")
	if err != nil || !slices.Equal(tags, []string{"1.2.3"}) {
		t.Fatalf("anonymous tags = %v, %v", tags, err)
	}
	if _, _, err := c.Manifest(context.Background(), "pub/app", "1.2.3"); err != nil {
		t.Fatalf("anonymous manifest: %v", err)
	}
}

// TestPrivateAddressRefused: without AllowPrivate, a registry at a
// loopback address is refused when connecting, and the error names the
// flag that allows it.
func TestPrivateAddressRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Errorf("reached %s", r.URL) }))
	defer srv.Close()
	c, err := ociclient.New(ociclient.Options{Host: strings.TrimPrefix(srv.URL, "http://"), PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tags(context.Background(), "a/b"); !errors.Is(err, netguard.ErrPrivateTarget) || !strings.Contains(err.Error(), "--allow-private-upstreams") {
		t.Fatalf("tags at 127.0.0.1: %v; want ErrPrivateTarget naming the flag", err)
	}
}

// TestRedirectChecks: a redirect to a private address is refused at
// connect time like the first request, and an https registry may not
// redirect down to plain http.
func TestRedirectChecks(t *testing.T) {
	private := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Errorf("reached %s", r.URL) }))
	defer private.Close()
	// A "public" front (reached through a transport that lets loopback
	// through for the first hop only) redirecting to the private one.
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, private.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer front.Close()
	guarded := netguard.Transport(ociclient.DefaultTimeout, false, "--allow-private-upstreams")
	open := &http.Transport{}
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host == strings.TrimPrefix(front.URL, "http://") {
			return open.RoundTrip(r)
		}
		return guarded.RoundTrip(r)
	})
	c, err := ociclient.New(ociclient.Options{Host: strings.TrimPrefix(front.URL, "http://"), PlainHTTP: true, Transport: rt})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tags(context.Background(), "a/b"); !errors.Is(err, netguard.ErrPrivateTarget) {
		t.Fatalf("redirect to a private address: %v; want ErrPrivateTarget", err)
	}

	tlsFront := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+r.Host+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer tlsFront.Close()
	c, err = ociclient.New(ociclient.Options{Host: strings.TrimPrefix(tlsFront.URL, "https://"), Transport: tlsFront.Client().Transport})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tags(context.Background(), "a/b"); err == nil || !strings.Contains(err.Error(), "refused a redirect from https") {
		t.Fatalf("https → http redirect: %v; want it refused", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestBlobDigestChecked: a registry that answers other bytes than the
// digest names is caught when the blob is read, and an oversized
// manifest is refused before it is read.
func TestBlobDigestChecked(t *testing.T) {
	want := []byte("the real bytes")
	d := digest.FromBytes(want)
	big := bytes.Repeat([]byte(" "), 2048)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/v2/a/b/blobs/"):
			w.Header().Set("Content-Length", "14")
			io.WriteString(w, "other bytes!!!")
		case strings.HasPrefix(r.URL.Path, "/v2/a/b/manifests/"):
			w.Header().Set("Content-Type", ocispec.MediaTypeImageManifest)
			w.Header().Set("Docker-Content-Digest", digest.FromBytes(big).String())
			w.Write(big)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, err := ociclient.New(ociclient.Options{Host: strings.TrimPrefix(srv.URL, "http://"), PlainHTTP: true, AllowPrivate: true, MaxManifestSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := c.Blob(context.Background(), "a/b", ociclient.Descriptor{Digest: d, Size: int64(len(want))})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := io.ReadAll(rc); !errors.Is(err, ociclient.ErrDigestMismatch) {
		t.Fatalf("read of wrong bytes: %v; want ErrDigestMismatch", err)
	}
	if _, _, err := c.Manifest(context.Background(), "a/b", "1.0.0"); err == nil {
		t.Fatalf("a manifest over the cap was read")
	}
}
