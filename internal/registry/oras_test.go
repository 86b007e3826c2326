package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/retry"
)

// orasRepo returns an oras-go client of name on e, logged in with key
// (through the token flow the registry's challenge points to).
func orasRepo(t *testing.T, e *env, name, key string) *remote.Repository {
	t.Helper()
	host := strings.TrimPrefix(e.URL, "http://")
	repo, err := remote.NewRepository(host + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	client := &auth.Client{Client: retry.DefaultClient, Cache: auth.NewCache()}
	if key != "" {
		client.Credential = auth.StaticCredential(host, auth.Credential{Username: "ci", Password: key})
	}
	repo.Client = client
	return repo
}

func pushBlob(t *testing.T, repo *remote.Repository, mediaType string, data []byte) ocispec.Descriptor {
	t.Helper()
	desc := content.NewDescriptorFromBytes(mediaType, data)
	if err := repo.Push(context.Background(), desc, bytes.NewReader(data)); err != nil {
		t.Fatalf("push blob: %v", err)
	}
	return desc
}

// TestORASClient uses oras-go as a third, independent client: an image
// with an artifact attached through subject shows in the referrers API
// (filtered by artifactType too), an index round-trips byte for byte, and
// the whole graph copies out of the registry.
func TestORASClient(t *testing.T) {
	e := setup(t)
	mustRepoIn(t, e, "team", "private")
	ctx := context.Background()
	repo := orasRepo(t, e, "team/app", e.AdminKey)

	layer := pushBlob(t, repo, "application/vnd.example.layer", []byte("layer bytes"))
	img, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "application/vnd.example.image",
		oras.PackManifestOptions{Layers: []ocispec.Descriptor{layer}})
	if err != nil {
		t.Fatalf("pack image: %v", err)
	}
	if err := repo.Tag(ctx, img, "v1"); err != nil {
		t.Fatalf("tag: %v", err)
	}
	sigLayer := pushBlob(t, repo, "application/vnd.example.sig", []byte("signature"))
	sig, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "application/vnd.example.signature",
		oras.PackManifestOptions{Subject: &img, Layers: []ocispec.Descriptor{sigLayer}, ManifestAnnotations: map[string]string{"org.example.signer": "ci"}})
	if err != nil {
		t.Fatalf("pack signature: %v", err)
	}

	var refs []ocispec.Descriptor
	if err := repo.Referrers(ctx, img, "", func(r []ocispec.Descriptor) error { refs = append(refs, r...); return nil }); err != nil {
		t.Fatalf("referrers: %v", err)
	}
	if len(refs) != 1 || refs[0].Digest != sig.Digest || refs[0].ArtifactType != "application/vnd.example.signature" || refs[0].Annotations["org.example.signer"] != "ci" {
		t.Fatalf("referrers = %+v, want the signature %s", refs, sig.Digest)
	}
	refs = nil
	if err := repo.Referrers(ctx, img, "application/vnd.example.sbom", func(r []ocispec.Descriptor) error { refs = append(refs, r...); return nil }); err != nil {
		t.Fatalf("filtered referrers: %v", err)
	}
	if len(refs) != 0 {
		t.Fatalf("filtered referrers = %+v, want none", refs)
	}
	// The referrers API itself answered (not the tag-schema fallback).
	r := e.do(t, "GET", "/v2/team/app/referrers/"+img.Digest.String()+"?artifactType=application/vnd.example.signature", e.AdminKey, nil)
	if r.StatusCode != 200 || r.Header.Get("OCI-Filters-Applied") != "artifactType" || !strings.Contains(string(r.Body), sig.Digest.String()) {
		t.Fatalf("referrers API: %d %s %s", r.StatusCode, r.Header, r.Body)
	}

	idx := ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex,
		Manifests:   []ocispec.Descriptor{img},
		Annotations: map[string]string{"org.example.kind": "multi"},
	}
	idxBytes, err := json.Marshal(idx)
	if err != nil {
		t.Fatal(err)
	}
	idxDesc, err := oras.TagBytes(ctx, repo, ocispec.MediaTypeImageIndex, idxBytes, "multi")
	if err != nil {
		t.Fatalf("push index: %v", err)
	}
	got, rc, err := repo.FetchReference(ctx, "multi")
	if err != nil {
		t.Fatalf("fetch index: %v", err)
	}
	body, _ := io.ReadAll(rc)
	rc.Close()
	if got.Digest != idxDesc.Digest || got.MediaType != ocispec.MediaTypeImageIndex || !bytes.Equal(body, idxBytes) {
		t.Fatalf("index round trip: %+v %s", got, body)
	}
	if got.Digest != digest.FromBytes(body) {
		t.Fatalf("index digest %s does not match its bytes", got.Digest)
	}

	// Copy the index with everything below it out of the registry, and
	// into another repository name of the same registry (a mount).
	dst := memory.New()
	if _, err := oras.Copy(ctx, repo, "multi", dst, "multi", oras.DefaultCopyOptions); err != nil {
		t.Fatalf("copy out: %v", err)
	}
	if ok, _ := dst.Exists(ctx, layer); !ok {
		t.Fatal("layer missing from the copy")
	}
	other := orasRepo(t, e, "team/mirror", e.AdminKey)
	if _, err := oras.Copy(ctx, repo, "multi", other, "multi", oras.DefaultCopyOptions); err != nil {
		t.Fatalf("copy across names: %v", err)
	}
	if _, _, err := other.FetchReference(ctx, "multi"); err != nil {
		t.Fatalf("fetch copied index: %v", err)
	}
	if rc, err := other.Blobs().Fetch(ctx, layer); err != nil {
		t.Fatalf("fetch mounted layer: %v", err)
	} else {
		rc.Close()
	}

	// Deleting the image leaves its blobs until GC; the signature still
	// refers to it through subject but the referrers index follows the
	// deleted signature.
	if err := repo.Delete(ctx, sig); err != nil {
		t.Fatalf("delete signature: %v", err)
	}
	refs = nil
	if err := repo.Referrers(ctx, img, "", func(r []ocispec.Descriptor) error { refs = append(refs, r...); return nil }); err != nil {
		t.Fatalf("referrers after delete: %v", err)
	}
	if len(refs) != 0 {
		t.Fatalf("referrers after delete = %+v", refs)
	}
}
