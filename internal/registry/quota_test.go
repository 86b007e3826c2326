package registry_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/chartctl/chartctl/internal/testkit"
)

// TestQuotaOverOCI: a push that fills the repository's byte quota exactly
// is stored; one byte more is DENIED with /v1's message, at the chart's
// layer already, before its bytes are kept. The push is audited like any
// other.
func TestQuotaOverOCI(t *testing.T) {
	e := setup(t)
	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	for repo, limit := range map[string]int{"at": len(archive), "over": len(archive) - 1} {
		mustRepoIn(t, e, repo, "private")
		if r := e.Do(t, "PUT", "/v1/repositories/"+repo+"/quota", e.AdminKey, strings.NewReader(fmt.Sprintf(`{"max_bytes":%d}`, limit)), "Content-Type", "application/json"); r.StatusCode != 200 {
			t.Fatalf("quota: %d %s", r.StatusCode, r.Body)
		}
	}
	put := func(repo string) *testkit.Response {
		m := chartManifest(t, e, repo+"/web", archive, nil)
		return e.do(t, "PUT", "/v2/"+repo+"/web/manifests/1.0.0", e.AdminKey, m, "Content-Type", ocispec.MediaTypeImageManifest)
	}
	if r := put("at"); r.StatusCode != 201 {
		t.Fatalf("exactly at the quota: %d %s", r.StatusCode, r.Body)
	}
	d := digest.FromBytes(archive)
	r := e.do(t, "POST", "/v2/over/web/blobs/uploads/?digest="+d.String(), e.AdminKey, archive, "Content-Type", "application/octet-stream")
	if r.StatusCode != 403 || ociCode(r) != "DENIED" || !strings.Contains(string(r.Body), fmt.Sprintf(`the max_bytes quota of repository \"over\" is %d bytes, with 0 bytes used`, len(archive)-1)) {
		t.Fatalf("one byte over: %d %s", r.StatusCode, r.Body)
	}
	a := e.Do(t, "GET", "/v1/audit?action=chart.push&limit=5", e.AdminKey, nil)
	if a.StatusCode != 200 || !strings.Contains(string(a.Body), `"target":"at/web/1.0.0"`) || strings.Contains(string(a.Body), `"target":"over/web/1.0.0"`) {
		t.Fatalf("audit: %d %s", a.StatusCode, a.Body)
	}
}

// TestQuotaCountsOCIArtifacts: blobs and manifests of artifacts that are
// not charts count against the repository's quota (CONTRACT §18 decision
// 12). A blob that cannot fit is DENIED with the quota's message before
// it is kept; blobs that fit one by one but not together are DENIED at
// their manifest; the stored artifact shows in the quota's usage, and a
// chart upload over /v1 afterwards counts its bytes.
func TestQuotaCountsOCIArtifacts(t *testing.T) {
	e := setup(t)
	mustRepoIn(t, e, "art", "private")
	setQuota := func(repo string, limit int) {
		t.Helper()
		if r := e.Do(t, "PUT", "/v1/repositories/"+repo+"/quota", e.AdminKey, strings.NewReader(fmt.Sprintf(`{"max_bytes":%d}`, limit)), "Content-Type", "application/json"); r.StatusCode != 200 {
			t.Fatalf("quota: %d %s", r.StatusCode, r.Body)
		}
	}
	setQuota("art", 1000)
	huge := bytes.Repeat([]byte("x"), 2<<20)
	d := digest.FromBytes(huge)
	// The refusal comes before the body is read, and the server then stops
	// reading: a client still writing 2 MiB may see its connection reset
	// before it reads the answer (more likely on a loaded machine). With
	// "Expect: 100-continue", as large-body clients send, it waits for the
	// server's word first and reads the refusal without sending the body.
	r := e.do(t, "POST", "/v2/art/app/blobs/uploads/?digest="+d.String(), e.AdminKey, huge, "Content-Type", "application/octet-stream", "Expect", "100-continue")
	if r.StatusCode != 403 || ociCode(r) != "DENIED" || !strings.Contains(string(r.Body), `the max_bytes quota of repository \"art\" is 1000 bytes, with 0 bytes used; this upload needs 2097152 more`) {
		t.Fatalf("2 MiB blob into a 1,000-byte quota: %d %s", r.StatusCode, r.Body)
	}
	// The same through a chunked upload's final PUT.
	r = e.do(t, "POST", "/v2/art/app/blobs/uploads/", e.AdminKey, nil)
	if r.StatusCode != 202 {
		t.Fatalf("start upload: %d %s", r.StatusCode, r.Body)
	}
	r = e.do(t, "PUT", r.Header.Get("Location")+"?digest="+d.String(), e.AdminKey, huge, "Content-Type", "application/octet-stream", "Expect", "100-continue")
	if r.StatusCode != 403 || ociCode(r) != "DENIED" {
		t.Fatalf("2 MiB chunked blob: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "HEAD", "/v2/art/app/blobs/"+d.String(), e.AdminKey, nil); r.StatusCode != 404 {
		t.Fatalf("refused blob is there: %d", r.StatusCode)
	}

	// Two layers that fit one by one but not together: the manifest is
	// refused, and nothing is counted.
	config, l1, l2 := []byte(`{"kind":"example"}`), bytes.Repeat([]byte("a"), 500), bytes.Repeat([]byte("b"), 600)
	for _, b := range [][]byte{config, l1, l2} {
		e.pushBlobHTTP(t, "art/app", e.AdminKey, b)
	}
	r = e.do(t, "PUT", "/v2/art/app/manifests/v1", e.AdminKey, imageManifest(t, config, l1, l2), "Content-Type", ocispec.MediaTypeImageManifest)
	if r.StatusCode != 403 || ociCode(r) != "DENIED" || !strings.Contains(string(r.Body), `the max_bytes quota of repository \"art\" is 1000 bytes, with 0 bytes used`) {
		t.Fatalf("manifest over the quota: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "GET", "/v2/art/app/manifests/v1", e.AdminKey, nil); r.StatusCode != 404 {
		t.Fatalf("refused manifest is there: %d", r.StatusCode)
	}
	// One layer fits, and is counted with its config and manifest.
	m := imageManifest(t, config, l1)
	if r := e.do(t, "PUT", "/v2/art/app/manifests/v1", e.AdminKey, m, "Content-Type", ocispec.MediaTypeImageManifest); r.StatusCode != 201 {
		t.Fatalf("manifest within the quota: %d %s", r.StatusCode, r.Body)
	}
	used := len(config) + len(l1) + len(m)
	var q struct {
		Data struct {
			UsedBytes int `json:"used_bytes"`
		}
	}
	e.Do(t, "GET", "/v1/repositories/art/quota", e.AdminKey, nil).JSON(t, &q)
	if q.Data.UsedBytes != used {
		t.Fatalf("used_bytes = %d, want %d", q.Data.UsedBytes, used)
	}

	// A chart that fits the quota alone does not fit beside the artifact.
	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	setQuota("art", used+len(archive)-1)
	r = e.Upload(t, "art", e.AdminKey, archive, "")
	if r.StatusCode != 507 || !strings.Contains(string(r.Body), fmt.Sprintf("with %d bytes used; this upload needs %d more", used, len(archive))) {
		t.Fatalf("chart upload after OCI usage: %d %s", r.StatusCode, r.Body)
	}
	setQuota("art", used+len(archive))
	if r := e.Upload(t, "art", e.AdminKey, archive, ""); r.StatusCode != 200 && r.StatusCode != 201 {
		t.Fatalf("chart upload that fits: %d %s", r.StatusCode, r.Body)
	}
}
