package registry_test

import (
	"fmt"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/chartctl/chartctl/internal/testkit"
)

// TestQuotaOverOCI: a push that fills the repository's byte quota exactly
// is stored; one byte more is DENIED with /v1's message. The push is
// audited like any other.
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
	r := put("over")
	if r.StatusCode != 403 || ociCode(r) != "DENIED" || !strings.Contains(string(r.Body), fmt.Sprintf(`the max_bytes quota of repository \"over\" is %d bytes, with 0 bytes used`, len(archive)-1)) {
		t.Fatalf("one byte over: %d %s", r.StatusCode, r.Body)
	}
	a := e.Do(t, "GET", "/v1/audit?action=chart.push&limit=5", e.AdminKey, nil)
	if a.StatusCode != 200 || !strings.Contains(string(a.Body), `"target":"at/web/1.0.0"`) || strings.Contains(string(a.Body), `"target":"over/web/1.0.0"`) {
		t.Fatalf("audit: %d %s", a.StatusCode, a.Body)
	}
}
