package registry_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
)

// TestRefusedWritesAudited sends refused and failed writes to /v2 over
// HTTP — pushes and deletes without the scope or role, a bad credential,
// a chart push over quota, deletes the registry refuses — and checks the
// entry each left: action, outcome (denied for authorization, failed for
// the rest, as on /v1), target, organization, actor and request id. The
// token flow's first, credential-less 401 and successful pushes leave no
// refusal.
func TestRefusedWritesAudited(t *testing.T) {
	e := setup(t)
	mustRepoIn(t, e, "pub", "public")
	mustRepoIn(t, e, "priv", "private")
	owner := e.MustUser(t, "owner@example.com", false)
	ownerKey := e.MustKey(t, owner, chartctl.AllScopes...)
	if r := e.DoJSON(t, "POST", "/v1/organizations", ownerKey, map[string]any{"name": "acme"}); r.StatusCode != 200 {
		t.Fatalf("org: %d %s", r.StatusCode, r.Body)
	}
	if r := e.DoJSON(t, "POST", "/v1/repositories", ownerKey, map[string]any{"name": "acme-apps", "organization": "acme"}); r.StatusCode != 200 {
		t.Fatalf("repo: %d %s", r.StatusCode, r.Body)
	}
	imageDigest, _ := e.pushImage(t, "priv/app", "v1", e.AdminKey)
	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	m := chartManifest(t, e, "priv/web", archive, nil)
	if r := e.do(t, "PUT", "/v2/priv/web/manifests/1.0.0", e.AdminKey, m, "Content-Type", ocispec.MediaTypeImageManifest); r.StatusCode != 201 {
		t.Fatalf("chart push: %d %s", r.StatusCode, r.Body)
	}
	stranger := e.MustUser(t, "stranger@example.com", false)
	strangerKey := e.MustKey(t, stranger, chartctl.AllScopes...)
	readOnly := e.MustKey(t, e.Admin, chartctl.ScopeRepoRead)
	if r := e.Do(t, "PUT", "/v1/repositories/acme-apps/quota", e.AdminKey, strings.NewReader(`{"max_versions":0}`), "Content-Type", "application/json"); r.StatusCode != 200 {
		t.Fatalf("quota: %d %s", r.StatusCode, r.Body)
	}
	quotaManifest := chartManifest(t, e, "acme-apps/web", archive, nil)

	type want struct{ action, outcome, target, org, email string }
	var wants []want
	for _, tc := range []struct {
		method, path, key string
		body              []byte
		status            int
		want              *want
	}{
		// A client's first try, without credentials: the challenge, not a refusal.
		{"POST", "/v2/priv/app/blobs/uploads/", "", nil, 401, nil},
		{"POST", "/v2/priv/app/blobs/uploads/", "chartctl_bogus", nil, 401,
			&want{"blob.upload", "denied", "/v2/priv/app/blobs/uploads/", "", ""}},
		{"POST", "/v2/pub/app/blobs/uploads/", strangerKey, nil, 403,
			&want{"blob.upload", "denied", "/v2/pub/app/blobs/uploads/", "", "stranger@example.com"}},
		{"DELETE", "/v2/priv/app/manifests/" + imageDigest.String(), readOnly, nil, 403,
			&want{"manifest.delete", "denied", "/v2/priv/app/manifests/" + imageDigest.String(), "", e.Admin.Email}},
		{"PUT", "/v2/acme-apps/web/manifests/1.0.0", readOnly, quotaManifest, 403,
			&want{"manifest.push", "denied", "/v2/acme-apps/web/manifests/1.0.0", "acme", e.Admin.Email}},
		// Over quota: DENIED on the wire, but a failure, not an authorization refusal.
		{"PUT", "/v2/acme-apps/web/manifests/1.0.0", e.AdminKey, quotaManifest, 403,
			&want{"chart.push", "failed", "/v2/acme-apps/web/manifests/1.0.0", "acme", e.Admin.Email}},
		{"DELETE", "/v2/priv/web/manifests/1.0.0", e.AdminKey, nil, 403,
			&want{"chart.delete", "failed", "/v2/priv/web/manifests/1.0.0", "", e.Admin.Email}},
		{"DELETE", "/v2/priv/web/blobs/" + digest.FromBytes(archive).String(), e.AdminKey, nil, 403,
			&want{"blob.delete", "failed", "/v2/priv/web/blobs/" + digest.FromBytes(archive).String(), "", e.Admin.Email}},
		{"DELETE", "/v2/priv/app/manifests/sha256:" + strings.Repeat("0", 64), e.AdminKey, nil, 404,
			&want{"manifest.delete", "failed", "/v2/priv/app/manifests/sha256:" + strings.Repeat("0", 64), "", e.Admin.Email}},
		{"PUT", "/v2/priv/app/manifests/v2", e.AdminKey, []byte("{not json"), 400,
			&want{"manifest.push", "failed", "/v2/priv/app/manifests/v2", "", e.Admin.Email}},
		{"PATCH", "/v2/priv/app/blobs/uploads/" + strings.Repeat("ab", 16), e.AdminKey, []byte("x"), 404,
			&want{"blob.upload", "failed", "/v2/priv/app/blobs/uploads/" + strings.Repeat("ab", 16), "", e.Admin.Email}},
	} {
		r := e.do(t, tc.method, tc.path, tc.key, tc.body, "Content-Type", ocispec.MediaTypeImageManifest)
		if r.StatusCode != tc.status {
			t.Fatalf("%s %s: %d %s, want %d", tc.method, tc.path, r.StatusCode, r.Body, tc.status)
		}
		if tc.want != nil {
			wants = append(wants, *tc.want)
		}
	}

	got := audited(t, e, chartctl.AuditFilter{Limit: 100}, "refusals", len(wants), func(g *chartctl.AuditEntry) bool {
		return g.Outcome != chartctl.OutcomeSuccess
	})
	for i, w := range wants {
		g := got[i]
		if g.Action != w.action || string(g.Outcome) != w.outcome || g.Target != w.target || g.Organization != w.org || g.Actor.Email != w.email {
			t.Errorf("entry %d = %s %s %s org=%q actor=%q, want %+v", i, g.Action, g.Outcome, g.Target, g.Organization, g.Actor.Email, w)
		}
		if g.Actor.RequestID == "" || g.Actor.ClientIP == "" {
			t.Errorf("entry %d lacks request id or client address: %+v", i, g.Actor)
		}
	}

	// An organization owner reads the refusals of the organization's
	// repositories through /v1.
	var page struct{ Data []client.AuditEntry }
	a := e.Do(t, "GET", "/v1/audit?organization=acme&action=chart.push&limit=5", ownerKey, nil)
	a.JSON(t, &page)
	if a.StatusCode != 200 || len(page.Data) != 1 || page.Data[0].Outcome != "failed" || page.Data[0].Target != "/v2/acme-apps/web/manifests/1.0.0" {
		t.Fatalf("owner's audit log: %d %s", a.StatusCode, a.Body)
	}
}

// TestArtifactWritesAudited: the successful writes of artifacts that are
// not charts — an image manifest pushed, a tag deleted, a manifest
// deleted, a blob deleted — each leave a success entry, written in the
// store transaction of the change, naming the artifact and the
// repository's organization.
func TestArtifactWritesAudited(t *testing.T) {
	e := setup(t)
	if r := e.DoJSON(t, "POST", "/v1/organizations", e.AdminKey, map[string]any{"name": "acme"}); r.StatusCode != 200 {
		t.Fatalf("org: %d %s", r.StatusCode, r.Body)
	}
	if r := e.DoJSON(t, "POST", "/v1/repositories", e.AdminKey, map[string]any{"name": "images", "organization": "acme"}); r.StatusCode != 200 {
		t.Fatalf("repo: %d %s", r.StatusCode, r.Body)
	}
	d1, _ := e.pushImage(t, "images/app", "v1", e.AdminKey)
	d2, layer := e.pushImage(t, "images/web", "v1", e.AdminKey)
	ld := digest.FromBytes(layer).String()
	for _, path := range []string{
		"/v2/images/app/manifests/v1",
		"/v2/images/app/manifests/" + d1.String(),
		"/v2/images/web/manifests/" + d2.String(),
		"/v2/images/web/blobs/" + ld,
	} {
		if r := e.do(t, "DELETE", path, e.AdminKey, nil); r.StatusCode != 202 {
			t.Fatalf("DELETE %s: %d %s", path, r.StatusCode, r.Body)
		}
	}
	want := []struct{ action, target string }{
		{"manifest.push", "images/app@" + d1.String()},
		{"manifest.push", "images/web@" + d2.String()},
		{"manifest.delete", "images/app:v1"},
		{"manifest.delete", "images/app@" + d1.String()},
		{"manifest.delete", "images/web@" + d2.String()},
		{"blob.delete", "images/web@" + ld},
	}
	got := audited(t, e, chartctl.AuditFilter{Organization: "acme", Limit: 100}, "artifact writes", len(want), func(g *chartctl.AuditEntry) bool {
		return strings.HasPrefix(g.Action, "manifest.") || strings.HasPrefix(g.Action, "blob.")
	})
	for i, w := range want {
		g := got[i]
		if g.Action != w.action || g.Target != w.target || g.Outcome != chartctl.OutcomeSuccess || g.Actor.Email != e.Admin.Email || g.Actor.RequestID == "" {
			t.Errorf("entry %d = %s %s %s actor=%+v, want %s %s success by %s", i, g.Action, g.Target, g.Outcome, g.Actor, w.action, w.target, e.Admin.Email)
		}
	}
}

// audited returns the entries of the audit log matching filter and keep,
// oldest first, and fails (listing them) unless there are n of them, what
// they are.
func audited(t *testing.T, e *env, filter chartctl.AuditFilter, what string, n int, keep func(*chartctl.AuditEntry) bool) []*chartctl.AuditEntry {
	t.Helper()
	entries, _, err := e.Store.AuditLog(context.Background(), filter)
	if err != nil {
		t.Fatal(err)
	}
	var got []*chartctl.AuditEntry
	for i := len(entries) - 1; i >= 0; i-- { // oldest first
		if keep(entries[i]) {
			got = append(got, entries[i])
		}
	}
	if len(got) != n {
		for _, g := range got {
			t.Logf("%s %s %s", g.Action, g.Outcome, g.Target)
		}
		t.Fatalf("%d %s audited, want %d", len(got), what, n)
	}
	return got
}
