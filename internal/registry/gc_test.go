package registry_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
)

// TestGarbageCollection: blobs no manifest refers to go once older than
// the grace period (a dry run only reports them), blobs of manifests stay,
// fresh pushes stay, and abandoned upload sessions go with their data.
func TestGarbageCollection(t *testing.T) {
	e := setup(t)
	mustRepoIn(t, e, "gc", "private")
	ctx := context.Background()
	_, layer := e.pushImage(t, "gc/app", "v1", e.AdminKey)
	lone := e.pushBlobHTTP(t, "gc/app", e.AdminKey, []byte("pushed, never referenced"))
	r := e.do(t, "POST", "/v2/gc/app/blobs/uploads/", e.AdminKey, nil)
	loc := r.Header.Get("Location")
	if r := e.do(t, "PATCH", loc, e.AdminKey, []byte("abandoned")); r.StatusCode != 202 {
		t.Fatalf("chunk: %d", r.StatusCode)
	}
	sessionID := r.Header.Get("Docker-Upload-UUID")

	// Within the grace period and the session expiry nothing goes.
	rep, err := e.Reg.CollectGarbage(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Blobs)+len(rep.Links)+len(rep.Sessions) != 0 {
		t.Fatalf("fresh content collected: %+v", rep)
	}

	later := time.Now().Add(e.Reg.Config.GCGrace + e.Reg.Config.UploadExpiry + time.Hour)
	e.Reg.Now = func() time.Time { return later }
	rep, err = e.Reg.CollectGarbage(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rep.Blobs) != "["+lone.String()+"]" || len(rep.Sessions) != 1 || !rep.DryRun {
		t.Fatalf("dry run: %+v", rep)
	}
	if r := e.do(t, "GET", "/v2/gc/app/blobs/"+lone.String(), e.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("dry run removed the blob: %d", r.StatusCode)
	}

	rep, err = e.Reg.CollectGarbage(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rep.Blobs) != "["+lone.String()+"]" || fmt.Sprint(rep.Sessions) != "["+sessionID+"]" {
		t.Fatalf("collection: %+v", rep)
	}
	if r := e.do(t, "GET", "/v2/gc/app/blobs/"+lone.String(), e.AdminKey, nil); r.StatusCode != 404 || ociCode(r) != "BLOB_UNKNOWN" {
		t.Fatalf("collected blob: %d %s", r.StatusCode, r.Body)
	}
	if _, err := e.Blobs.Open(ctx, lone.String()); err == nil {
		t.Fatal("collected blob still in the blob store")
	}
	if r := e.do(t, "GET", "/v2/gc/app/blobs/"+digest.FromBytes(layer).String(), e.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("referenced layer collected: %d", r.StatusCode)
	}
	if r := e.do(t, "GET", "/v2/gc/app/manifests/v1", e.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("manifest after GC: %d", r.StatusCode)
	}
	if _, err := os.Stat(filepath.Join(e.Reg.Config.UploadDir, sessionID)); !os.IsNotExist(err) {
		t.Fatalf("session data left: %v", err)
	}
	if r := e.do(t, "GET", loc, e.AdminKey, nil); r.StatusCode != 404 || ociCode(r) != "BLOB_UPLOAD_UNKNOWN" {
		t.Fatalf("collected session: %d %s", r.StatusCode, r.Body)
	}
}

// TestAdminGC: POST /v1/admin/gc through the real client SDK, as `chartctl
// admin gc` sends it; server admins only.
func TestAdminGC(t *testing.T) {
	e := setup(t)
	mustRepoIn(t, e, "gc", "private")
	lone := e.pushBlobHTTP(t, "gc/app", e.AdminKey, []byte("lone"))
	e.Reg.Now = func() time.Time { return time.Now().Add(e.Reg.Config.GCGrace + time.Hour) }
	ctx := context.Background()
	c, err := client.New(e.URL, client.WithToken(e.AdminKey))
	if err != nil {
		t.Fatal(err)
	}
	rep, _, err := c.Admin.GC(ctx, true)
	if err != nil || !rep.DryRun || fmt.Sprint(rep.Blobs) != "["+lone.String()+"]" {
		t.Fatalf("dry run: %+v %v", rep, err)
	}
	user := e.MustUser(t, "user@example.com", false)
	uc, _ := client.New(e.URL, client.WithToken(e.MustKey(t, user, chartctl.AllScopes...)))
	var apiErr *client.Error
	if _, _, err := uc.Admin.GC(ctx, false); !errors.As(err, &apiErr) || apiErr.StatusCode != 403 {
		t.Fatalf("non-admin: %v", err)
	}
	rep, _, err = c.Admin.GC(ctx, false)
	if err != nil || rep.DryRun || len(rep.Blobs) != 1 || rep.Bytes != 4 {
		t.Fatalf("collection: %+v %v", rep, err)
	}
	// Every run is in the audit log: the dry run and the collection by the
	// admin, the refused one as denied.
	entries, _, err := e.Store.AuditLog(ctx, chartctl.AuditFilter{Action: "registry.gc", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range entries {
		got = append(got, fmt.Sprintf("%s %s %s", a.Outcome, a.Actor.Email, a.Target))
	}
	want := "[success admin@example.com registry denied user@example.com /v1/admin/gc success admin@example.com registry (dry run)]"
	if fmt.Sprint(got) != want {
		t.Errorf("audit log of registry.gc (newest first):\n got %v\nwant %s", got, want)
	}
}

// TestGCCollectsDeletedBlobsPastGrace: deleting a chart version or an OCI
// blob leaves a blob younger than the grace period in place (another
// replica may be about to commit a record referring to the same bytes);
// garbage collection, and its dry run, leave it too until it is past the
// grace period, then remove it.
func TestGCCollectsDeletedBlobsPastGrace(t *testing.T) {
	e := setup(t)
	mustRepoIn(t, e, "gc", "private")
	ctx := context.Background()
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	if r := e.Upload(t, "gc", e.AdminKey, archive, ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	chartBlob := digest.FromBytes(archive).String()
	layer := e.pushBlobHTTP(t, "gc/layers", e.AdminKey, []byte("a layer, then deleted")).String()
	if r := e.Do(t, "DELETE", "/v1/repositories/gc/charts/app/1.0.0", e.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete chart: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "DELETE", "/v2/gc/layers/blobs/"+layer, e.AdminKey, nil); r.StatusCode != 202 {
		t.Fatalf("delete blob: %d %s", r.StatusCode, r.Body)
	}
	present := func(d string) bool {
		_, err := e.Blobs.ModTime(ctx, d)
		return err == nil
	}
	if !present(chartBlob) || !present(layer) {
		t.Fatal("a delete removed a blob younger than the grace period")
	}
	for _, dry := range []bool{true, false} {
		rep, err := e.Reg.CollectGarbage(ctx, dry)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Blobs) != 0 || !present(chartBlob) || !present(layer) {
			t.Fatalf("collection (dry run %v) within the grace period: %+v", dry, rep)
		}
	}

	e.Reg.Now = func() time.Time { return time.Now().Add(e.Reg.Config.GCGrace + time.Minute) }
	want := []string{chartBlob, layer}
	slices.Sort(want)
	dry, err := e.Reg.CollectGarbage(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(dry.Blobs) != fmt.Sprint(want) || !present(chartBlob) {
		t.Fatalf("dry run past the grace period: %+v, want blobs %v", dry, want)
	}
	rep, err := e.Reg.CollectGarbage(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rep.Blobs) != fmt.Sprint(want) || rep.Bytes != dry.Bytes || present(chartBlob) || present(layer) {
		t.Fatalf("collection past the grace period: %+v, want blobs %v (%d bytes)", rep, want, dry.Bytes)
	}
}
