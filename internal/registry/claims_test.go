package registry_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/registry"
	"github.com/chartctl/chartctl/internal/testkit"
)

// claimTracker records the blob claims taken and released through the
// store, and, per digest, whether a claim was held when its link was
// written.
type claimTracker struct {
	chartctl.Store
	mu          sync.Mutex
	held, taken map[string]int
	linkedHeld  map[string]bool
}

func (c *claimTracker) ClaimBlobs(ctx context.Context, holder string, digests []string, ttl time.Duration) error {
	if err := c.Store.ClaimBlobs(ctx, holder, digests, ttl); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range digests {
		c.held[d]++
		c.taken[d]++
	}
	return nil
}

func (c *claimTracker) ReleaseBlobClaims(ctx context.Context, holder string, digests []string) error {
	c.mu.Lock()
	for _, d := range digests {
		c.held[d]--
	}
	c.mu.Unlock()
	return c.Store.ReleaseBlobClaims(ctx, holder, digests)
}

// linkWatcher notes in c whether each link is written under a claim.
type linkWatcher struct {
	chartctl.OCIStore
	c *claimTracker
}

func (l *linkWatcher) LinkBlobs(ctx context.Context, links []chartctl.OCIBlobLink) error {
	l.c.mu.Lock()
	for _, k := range links {
		l.c.linkedHeld[k.Digest] = l.c.held[k.Digest] > 0
	}
	l.c.mu.Unlock()
	return l.OCIStore.LinkBlobs(ctx, links)
}

// counts returns how many claims of d are held and were taken.
func (c *claimTracker) counts(d digest.Digest) (held, taken int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[d.String()], c.taken[d.String()]
}

// waitReleased waits, up to five seconds, until no claim of d is held
// (releases after an answer run in the background: ReleaseLater).
func (c *claimTracker) waitReleased(t *testing.T, d digest.Digest, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		held, _ := c.counts(d)
		if held == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d claims of %s still held", what, held, d)
		}
	}
}

// TestUploadClaimsEarly: a request completing an upload claims its
// digest while the request is checked, once, and links the blob under
// that claim; a request refused after the claim (an unknown session, a
// quota) leaves no claim behind.
func TestUploadClaimsEarly(t *testing.T) {
	ct := &claimTracker{held: map[string]int{}, taken: map[string]int{}, linkedHeld: map[string]bool{}}
	e := setup(t, func(r *registry.Registry) {
		ct.Store = r.App.Store
		r.App.Store = ct
		r.OCI = &linkWatcher{OCIStore: r.OCI, c: ct}
	}, unkeyedSessions)
	mustRepoIn(t, e, "apps", "private")

	// Monolithic (POST ?digest=) and a session completed by PUT.
	for i, how := range []string{"monolithic", "session"} {
		data := []byte(fmt.Sprintf("blob %d, pushed %s", i, how))
		d := digest.FromBytes(data)
		switch how {
		case "monolithic":
			e.pushBlobHTTP(t, "apps/img", e.AdminKey, data)
		case "session":
			r := e.do(t, "POST", "/v2/apps/img/blobs/uploads/", e.AdminKey, nil)
			if r.StatusCode != 202 {
				t.Fatalf("start upload: %d %s", r.StatusCode, r.Body)
			}
			loc := r.Header.Get("Location")
			sep := "?"
			if strings.Contains(loc, "?") {
				sep = "&"
			}
			if r := e.do(t, "PUT", loc+sep+"digest="+d.String(), e.AdminKey, data, "Content-Type", "application/octet-stream"); r.StatusCode != 201 {
				t.Fatalf("complete upload: %d %s", r.StatusCode, r.Body)
			}
		}
		if _, taken := ct.counts(d); taken != 1 {
			t.Errorf("%s: %d claims taken, want 1", how, taken)
		}
		ct.mu.Lock()
		underClaim, linked := ct.linkedHeld[d.String()]
		ct.mu.Unlock()
		if !linked || !underClaim {
			t.Errorf("%s: linked %v, under a claim %v; want both", how, linked, underClaim)
		}
		ct.waitReleased(t, d, how)
	}

	// Refused after the claim: an unknown session.
	lost := digest.FromBytes([]byte("never stored"))
	r := e.do(t, "PUT", "/v2/apps/img/blobs/uploads/"+strings.Repeat("a", 32)+"?digest="+lost.String(), e.AdminKey, []byte("never stored"))
	if r.StatusCode != 404 || ociCode(r) != "BLOB_UPLOAD_UNKNOWN" {
		t.Fatalf("unknown session: %d %s", r.StatusCode, r.Body)
	}
	ct.waitReleased(t, lost, "unknown session")

	// Refused after the claim: over the quota.
	if r := e.Do(t, "PUT", "/v1/repositories/apps/quota", e.AdminKey, strings.NewReader(`{"max_bytes":10}`), "Content-Type", "application/json"); r.StatusCode != 200 {
		t.Fatalf("quota: %d %s", r.StatusCode, r.Body)
	}
	big := []byte("more than ten bytes of blob")
	bd := digest.FromBytes(big)
	r = e.do(t, "POST", "/v2/apps/img/blobs/uploads/?digest="+bd.String(), e.AdminKey, big, "Content-Type", "application/octet-stream")
	if r.StatusCode != 403 || ociCode(r) != "DENIED" {
		t.Fatalf("over the quota: %d %s", r.StatusCode, r.Body)
	}
	ct.waitReleased(t, bd, "over the quota")
	if held, taken := ct.counts(bd); taken != 1 || held != 0 {
		t.Fatalf("over the quota: %d claims taken, %d held; want 1 and 0", taken, held)
	}
}

// TestLinkedChartPushClaimsNoBlob: the manifest of a chart pushed over OCI
// stores its version without claiming the archive, which its link keeps
// (the version's transaction checks the link), while an upload through
// /v1, whose archive only a claim keeps until the version is stored,
// claims it.
func TestLinkedChartPushClaimsNoBlob(t *testing.T) {
	ct := &claimTracker{held: map[string]int{}, taken: map[string]int{}, linkedHeld: map[string]bool{}}
	e := setup(t, func(r *registry.Registry) {
		ct.Store = r.App.Store
		r.App.Store = ct
	})
	mustRepoIn(t, e, "apps", "private")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	ad := e.pushBlobHTTP(t, "apps/web", e.AdminKey, archive)
	config := []byte(`{"name":"web","version":"1.0.0"}`)
	cd := e.pushBlobHTTP(t, "apps/web", e.AdminKey, config)
	if _, taken := ct.counts(ad); taken != 1 {
		t.Fatalf("the archive's upload took %d claims, want 1", taken)
	}
	if r := e.do(t, "PUT", "/v2/apps/web/manifests/1.0.0", e.AdminKey, helmChartManifest(t, config, cd, archive, ad), "Content-Type", ocispec.MediaTypeImageManifest); r.StatusCode != 201 {
		t.Fatalf("chart manifest: %d %s", r.StatusCode, r.Body)
	}
	if _, taken := ct.counts(ad); taken != 1 {
		t.Fatalf("the chart's manifest claimed its linked archive: %d claims in all, want the upload's 1", taken)
	}
	if r := e.Do(t, "GET", "/v1/repositories/apps/charts/web/1.0.0", e.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("the version: %d %s", r.StatusCode, r.Body)
	}

	other := testkit.MakeChart(t, testkit.Chart{Name: "api", Version: "1.0.0"})
	if r := e.Upload(t, "apps", e.AdminKey, other, ""); r.StatusCode != 200 {
		t.Fatalf("/v1 upload: %d %s", r.StatusCode, r.Body)
	}
	if _, taken := ct.counts(digest.FromBytes(other)); taken != 1 {
		t.Fatalf("a /v1 upload took %d claims of its archive, want 1", taken)
	}
	ct.waitReleased(t, digest.FromBytes(other), "/v1 upload")
}
