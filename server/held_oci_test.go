package server_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/registry"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// pushOCIBlob uploads b to name on ts's registry (a POST that opens an
// upload session, a PUT of the whole blob) and returns its digest.
func pushOCIBlob(t *testing.T, ts *testkit.Server, name string, b []byte) string {
	t.Helper()
	r := ts.Do(t, http.MethodPost, "/v2/"+name+"/blobs/uploads/", ts.AdminKey, nil)
	if r.StatusCode != http.StatusAccepted {
		t.Fatalf("open upload: %d %s", r.StatusCode, r.Body)
	}
	loc := strings.TrimPrefix(r.Header.Get("Location"), ts.URL)
	sep := "?"
	if strings.Contains(loc, "?") {
		sep = "&"
	}
	d := digest.FromBytes(b).String()
	if r := ts.Do(t, http.MethodPut, loc+sep+"digest="+d, ts.AdminKey, strings.NewReader(string(b)), "Content-Type", "application/octet-stream"); r.StatusCode != http.StatusCreated {
		t.Fatalf("put blob: %d %s", r.StatusCode, r.Body)
	}
	return d
}

// TestHeldOCIPushReleasedByCosignSignature: a chart pushed over OCI as
// Helm pushes it, unsigned, under require_signature with a hold window is
// held: its tag is not listed and nobody pulls its manifest (but the
// pusher, to sign it) or its archive. A cosign signature in the legacy
// scheme (a simple-signing payload signed with the trusted key, under
// the tag sha256-<hex>.sig, as `cosign sign --key` writes with
// --new-bundle-format=false) releases it: listed and pullable by anyone.
func TestHeldOCIPushReleasedByCosignSignature(t *testing.T) {
	clock := &heldClock{now: time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)}
	ts := testkit.StartServer(t, func(s *server.Server) {
		s.Now = clock.Now
		s.Extra = func(e *echo.Echo) {
			blobs := s.Blobs.(*blob.Store)
			reg := registry.New(s.App(), s.Store.(*bolt.DB), blobs, filepath.Join(filepath.Dir(blobs.Root()), "uploads"))
			reg.Auth, reg.Limits, reg.Uploads = s, s, s
			reg.SessionKey = []byte("held oci test: upload session key")
			reg.Register(e)
		}
	})
	ts.MustRepo(t, "prod", "public")
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if r := ts.DoJSON(t, http.MethodPost, "/v1/repositories/prod/trust", ts.AdminKey, map[string]string{"name": "release", "kind": "cosign-key",
		"key": string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))}); r.StatusCode >= 300 {
		t.Fatalf("add trust: %d %s", r.StatusCode, r.Body)
	}
	if r := ts.DoJSON(t, http.MethodPut, "/v1/repositories/prod/policy", ts.AdminKey,
		map[string]any{"require_signature": "release", "hold_window": "10m"}); r.StatusCode != http.StatusOK {
		t.Fatalf("set policy: %d %s", r.StatusCode, r.Body)
	}
	oc, err := testkit.NewOCIChart("web", "1.0.0", testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := testkit.PushLikeHelm(http.DefaultClient, ts.URL, "prod", "ci", ts.AdminKey, oc); err != nil {
		t.Fatalf("push like helm: %v", err)
	}
	if cv, code := heldVersion(t, ts, ts.AdminKey, "prod", "web", "1.0.0"); code != http.StatusOK || !cv.Held {
		t.Fatalf("after an unsigned OCI push: %d %+v", code, cv)
	}
	archive := digest.FromBytes(oc.Archive).String()
	hidden := func(when string, want bool) {
		t.Helper()
		tags := ts.Do(t, http.MethodGet, "/v2/prod/web/tags/list", "", nil)
		man := ts.Do(t, http.MethodGet, "/v2/prod/web/manifests/1.0.0", "", nil, "Accept", ocispec.MediaTypeImageManifest)
		layer := ts.Do(t, http.MethodGet, "/v2/prod/web/blobs/"+archive, ts.AdminKey, nil)
		got := !strings.Contains(string(tags.Body), `"1.0.0"`) && man.StatusCode == http.StatusNotFound && layer.StatusCode == http.StatusNotFound
		shown := strings.Contains(string(tags.Body), `"1.0.0"`) && man.StatusCode == http.StatusOK && layer.StatusCode == http.StatusOK
		if (want && !got) || (!want && !shown) {
			t.Fatalf("%s: tags/list %d %s; anonymous manifest %d; archive blob %d", when, tags.StatusCode, tags.Body, man.StatusCode, layer.StatusCode)
		}
	}
	hidden("held", true)
	if r := ts.Do(t, http.MethodGet, "/v2/prod/web/manifests/1.0.0", ts.AdminKey, nil, "Accept", ocispec.MediaTypeImageManifest); r.StatusCode != http.StatusOK ||
		r.Header.Get("Docker-Content-Digest") != oc.ManifestDigest {
		t.Fatalf("the pusher's GET of the held manifest: %d %s", r.StatusCode, r.Header.Get("Docker-Content-Digest"))
	}

	// cosign's legacy signature of the manifest.
	payload := []byte(fmt.Sprintf(`{"critical":{"identity":{"docker-reference":"%s/prod/web"},"image":{"docker-manifest-digest":%q},"type":"cosign container image signature"},"optional":null}`,
		strings.TrimPrefix(ts.URL, "http://"), oc.ManifestDigest))
	signer, err := signature.LoadECDSASignerVerifier(priv, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := signer.SignMessage(strings.NewReader(string(payload)))
	if err != nil {
		t.Fatal(err)
	}
	config := []byte("{}")
	configDigest := pushOCIBlob(t, ts, "prod/web", config)
	payloadDigest := pushOCIBlob(t, ts, "prod/web", payload)
	m, err := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		Config: ocispec.Descriptor{MediaType: "application/vnd.oci.image.config.v1+json", Digest: digest.Digest(configDigest), Size: int64(len(config))},
		Layers: []ocispec.Descriptor{{MediaType: "application/vnd.dev.cosign.simplesigning.v1+json", Digest: digest.Digest(payloadDigest), Size: int64(len(payload)),
			Annotations: map[string]string{"dev.cosignproject.cosign/signature": base64.StdEncoding.EncodeToString(sig)}}}})
	if err != nil {
		t.Fatal(err)
	}
	tag := strings.Replace(oc.ManifestDigest, ":", "-", 1) + ".sig"
	if r := ts.Do(t, http.MethodPut, "/v2/prod/web/manifests/"+tag, ts.AdminKey, strings.NewReader(string(m)), "Content-Type", ocispec.MediaTypeImageManifest); r.StatusCode != http.StatusCreated {
		t.Fatalf("push the signature: %d %s", r.StatusCode, r.Body)
	}
	cv, code := heldVersion(t, ts, ts.AdminKey, "prod", "web", "1.0.0")
	if code != http.StatusOK || cv.Held || cv.Verification == nil || cv.Verification.Status != "verified" {
		t.Fatalf("after the cosign signature: %d %+v", code, cv)
	}
	hidden("released", false)
	// Released, it is no longer the sweep's.
	clock.Advance(time.Hour)
	if gone, err := ts.App().SweepHeld(context.Background()); err != nil || len(gone) != 0 {
		t.Fatalf("sweep after the release: %d deleted, %v", len(gone), err)
	}
}
