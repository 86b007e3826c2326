package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/backup"
	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// capture reads every answer a client could compare: the /v1 lists, each
// repository's index.yaml and archives, webhooks, quotas, retention
// policies, download counters and the audit log.
func capture(t *testing.T, ts *testkit.Server, key string) map[string]string {
	t.Helper()
	out := map[string]string{}
	get := func(path string) *testkit.Response {
		r := ts.Do(t, http.MethodGet, path, key, nil)
		if r.StatusCode != 200 {
			t.Errorf("GET %s: %d %s", path, r.StatusCode, r.Body)
		}
		out[path] = string(r.Body)
		return r
	}
	var repos struct{ Data []struct{ Name string } }
	get("/v1/repositories?limit=100").JSON(t, &repos)
	var orgs struct{ Data []struct{ Name string } }
	get("/v1/organizations?limit=100").JSON(t, &orgs)
	get("/v1/teams?limit=100")
	// last_used_at is written behind requests, in batches, so it is not
	// part of what a snapshot can pin; the rest of each key is.
	keys := get("/v1/user/api-keys?limit=100")
	out["/v1/user/api-keys?limit=100"] = lastUsed.ReplaceAllString(string(keys.Body), `"last_used_at":…`)
	get("/v1/admin/webhooks")
	get("/v1/audit?limit=100")
	for _, o := range orgs.Data {
		get("/v1/organizations/" + o.Name + "/webhooks")
		get("/v1/organizations/" + o.Name + "/quota")
	}
	var archives []string
	for _, r := range repos.Data {
		get("/v1/repositories/" + r.Name)
		get("/helm/" + r.Name + "/index.yaml")
		get("/v1/repositories/" + r.Name + "/webhooks")
		get("/v1/repositories/" + r.Name + "/quota")
		get("/v1/repositories/" + r.Name + "/retention")
		var charts struct {
			Data []struct{ Name, Version string }
		}
		get("/v1/repositories/"+r.Name+"/charts?limit=100").JSON(t, &charts)
		for _, c := range charts.Data {
			get(fmt.Sprintf("/v1/repositories/%s/charts/%s/%s", r.Name, c.Name, c.Version))
			archives = append(archives, fmt.Sprintf("/v1/repositories/%s/charts/%s/%s/archive", r.Name, c.Name, c.Version))
		}
	}
	// Downloads last: they count, and a flush of the counters must not
	// land between two reads above.
	for _, a := range archives {
		get(a)
	}
	return out
}

var lastUsed = regexp.MustCompile(`"last_used_at":("[^"]*"|null)`)

func uploadWithProv(t *testing.T, ts *testkit.Server, repo string, archive, prov []byte) {
	t.Helper()
	fields := map[string][]byte{"chart": archive}
	if prov != nil {
		fields["prov"] = prov
	}
	body, ctype := testkit.Multipart(t, fields)
	if r := ts.Do(t, http.MethodPost, "/v1/repositories/"+repo+"/charts", ts.AdminKey, bytes.NewReader(body), "Content-Type", ctype); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
}

// restoreInto restores b into a new data directory and returns it.
func restoreInto(t *testing.T, b []byte) (string, *backup.Result, error) {
	t.Helper()
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, "chartctl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := backup.Restore(context.Background(), bytes.NewReader(b), backup.Target{Store: db, Blobs: blobs})
	return dir, res, err
}

// populate gives a server one of everything a backup carries beyond
// users, repositories and charts: webhooks of every scope (one disabled),
// quotas of a repository and an organization, a retention policy, a
// download counter and, from all of it, the audit log.
func populate(t *testing.T, ts *testkit.Server) {
	t.Helper()
	ts.MustRepo(t, "pub", "public")
	for _, req := range []struct {
		method, path string
		body         any
	}{
		{http.MethodPost, "/v1/organizations", map[string]string{"name": "acme"}},
		{http.MethodPost, "/v1/teams", map[string]string{"name": "devs", "organization": "acme"}},
		{http.MethodPost, "/v1/teams/devs/members", map[string]string{"email": "dev@example.com", "role": "maintainer"}},
		{http.MethodPost, "/v1/repositories", map[string]string{"name": "apps", "organization": "acme", "visibility": "private"}},
		{http.MethodPost, "/v1/repositories/apps/webhooks", map[string]any{"url": "https://hooks.example.com/apps", "events": []string{"chart.pushed"}}},
		{http.MethodPost, "/v1/organizations/acme/webhooks", map[string]any{"url": "https://hooks.example.com/acme", "events": []string{"*"}, "active": false}},
		{http.MethodPost, "/v1/admin/webhooks", map[string]any{"url": "https://hooks.example.com/all", "events": []string{"api_key.created"}}},
		{http.MethodPut, "/v1/repositories/apps/quota", map[string]any{"max_bytes": 1 << 20, "max_versions": 50}},
		{http.MethodPut, "/v1/organizations/acme/quota", map[string]any{"max_versions": 500}},
		{http.MethodPut, "/v1/repositories/apps/retention", map[string]any{"keep_latest": 3, "keep_matching": ">=1.0.0"}},
	} {
		if r := ts.DoJSON(t, req.method, req.path, ts.AdminKey, req.body); r.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", req.method, req.path, r.StatusCode, r.Body)
		}
	}
	for i := 0; i < 3; i++ {
		var prov []byte
		if i == 0 {
			prov = []byte("signature\n")
		}
		uploadWithProv(t, ts, "apps", testkit.MakeChart(t, testkit.Chart{Name: "web", Version: fmt.Sprintf("1.%d.0", i)}), prov)
	}
	uploadWithProv(t, ts, "pub", testkit.MakeChart(t, testkit.Chart{Name: "tool", Version: "0.1.0", Keywords: []string{"cli"}}), nil)
	for range 2 {
		if r := ts.Do(t, http.MethodGet, "/v1/repositories/apps/charts/web/1.0.0/archive", ts.AdminKey, nil); r.StatusCode != 200 {
			t.Fatal(r.StatusCode)
		}
	}
	if err := ts.App().FlushDownloads(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A backup taken while uploads and deletes go on restores into a fresh
// data directory that answers every list, index.yaml and download
// byte-identically to the source at the snapshot point.
func TestBackupUnderConcurrentWritesRestoresSnapshot(t *testing.T) {
	// Writers pause around the moment the snapshot is fixed so the test
	// can read the source as it was then; they run before it and all
	// through the export of records and the streaming of blobs.
	var gate sync.RWMutex
	var atSnapshot map[string]string
	var ts *testkit.Server
	ts = testkit.StartServer(t, func(s *server.Server) {
		s.BackupSnapshotHook = func() {
			atSnapshot = capture(t, ts, ts.AdminKey)
			gate.Unlock()
		}
	})
	populate(t, ts)
	ts.MustRepo(t, "priv", "private")
	for i := 0; i < 12; i++ {
		var prov []byte
		if i%3 == 0 {
			prov = []byte(fmt.Sprintf("signature %d\n", i))
		}
		uploadWithProv(t, ts, "pub", testkit.MakeChart(t, testkit.Chart{Name: "app", Version: fmt.Sprintf("1.%d.0", i)}), prov)
		uploadWithProv(t, ts, "priv", testkit.MakeChart(t, testkit.Chart{Name: "db", Version: fmt.Sprintf("2.%d.0", i), Keywords: []string{"sql"}}), nil)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var uploads, deletes atomic.Int64
	writer := func(do func(i int)) {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			gate.RLock()
			do(i)
			gate.RUnlock()
		}
	}
	wg.Add(2)
	go writer(func(i int) {
		r := ts.Upload(t, "pub", ts.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "live", Version: fmt.Sprintf("0.0.%d", i)}), "")
		if r.StatusCode == 200 {
			uploads.Add(1)
		}
	})
	go writer(func(i int) {
		// Delete the preloaded versions one by one, then the live ones.
		path := fmt.Sprintf("/v1/repositories/priv/charts/db/2.%d.0", i)
		if i >= 12 {
			path = fmt.Sprintf("/v1/repositories/pub/charts/live/0.0.%d", i-12)
		}
		if r := ts.Do(t, http.MethodDelete, path, ts.AdminKey, nil); r.StatusCode == 200 {
			deletes.Add(1)
		}
	})
	// Let the writers get going, then pause them at the snapshot.
	for uploads.Load() < 3 || deletes.Load() < 3 {
		gate.RLock()
		gate.RUnlock()
	}
	gate.Lock() // unlocked by the snapshot hook
	r := ts.Do(t, http.MethodGet, "/v1/admin/backup", ts.AdminKey, nil)
	close(stop)
	wg.Wait()
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != backup.MediaType {
		t.Fatalf("backup: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}
	if atSnapshot == nil {
		t.Fatal("the snapshot hook did not run")
	}
	mustHold(t, atSnapshot)
	t.Logf("writers made %d uploads and %d deletes", uploads.Load(), deletes.Load())
	after := capture(t, ts, ts.AdminKey)
	if fmt.Sprint(after) == fmt.Sprint(atSnapshot) {
		t.Fatal("no write landed after the snapshot; the test proves nothing")
	}

	dir, res, err := restoreInto(t, r.Body)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	if !res.OK || res.Checked.ChartVersions == 0 || res.Checked.Blobs == 0 {
		t.Fatalf("restore result %+v", res)
	}
	restored := testkit.OpenServer(t, dir)
	got := capture(t, restored, ts.AdminKey)
	var paths []string
	for p := range atSnapshot {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if got[p] != atSnapshot[p] {
			t.Errorf("%s differs from the source at the snapshot point:\n got %.300s\nwant %.300s", p, got[p], atSnapshot[p])
		}
	}
	if len(got) != len(atSnapshot) {
		t.Errorf("restored server answers %d paths, the source had %d", len(got), len(atSnapshot))
	}
	// The restored store is whole, and the live source too.
	for name, srv := range map[string]*testkit.Server{"restored": restored, "source": ts} {
		v := srv.Do(t, http.MethodPost, "/v1/admin/verify", ts.AdminKey, nil)
		var out struct{ Data backup.Result }
		v.JSON(t, &out)
		if v.StatusCode != 200 || !out.Data.OK {
			t.Errorf("verify %s: %d %s", name, v.StatusCode, v.Body)
		}
	}
}

// mustHold checks that a capture of a populated server shows what
// populate made, so comparing captures compares it.
func mustHold(t *testing.T, got map[string]string) {
	t.Helper()
	for path, want := range map[string]string{
		"/v1/audit?limit=100":                            `"action":"webhook.create"`,
		"/v1/admin/webhooks":                             "https://hooks.example.com/all",
		"/v1/repositories/apps/webhooks":                 "https://hooks.example.com/apps",
		"/v1/organizations/acme/webhooks":                `"active":false`,
		"/v1/repositories/apps/quota":                    `1048576`,
		"/v1/organizations/acme/quota":                   `500`,
		"/v1/repositories/apps/retention":                `"keep_latest":3`,
		"/v1/repositories/apps/charts/web/1.0.0":         `"downloads":2`,
		"/v1/repositories/apps/charts/web/1.0.0/archive": "",
	} {
		body, ok := got[path]
		if !ok || !strings.Contains(body, want) {
			t.Errorf("GET %s = %.300s, want it to hold %s", path, body, want)
		}
	}
}

func TestBackupTamperedRefused(t *testing.T) {
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "r", "private")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	uploadWithProv(t, ts, "r", archive, []byte("sig\n"))
	r := ts.Do(t, http.MethodGet, "/v1/admin/backup", ts.AdminKey, nil)
	if r.StatusCode != 200 {
		t.Fatal(r.StatusCode)
	}
	good := r.Body
	if _, res := backup.Read(context.Background(), bytes.NewReader(good), nil); !res.OK {
		t.Fatalf("the untouched backup does not verify: %+v", res.Problems)
	}
	at := bytes.Index(good, archive)
	if at < 0 {
		t.Fatal("the archive's bytes are not in the backup")
	}
	cases := map[string]struct {
		b    []byte
		kind string
	}{
		"flipped byte in a blob":   {flip(good, at+len(archive)/2), "blob_digest"},
		"flipped byte in records":  {flip(good, bytes.Index(good, []byte(`"kind":"chart_version"`))+3), ""},
		"flipped byte in a header": {flip(good, 10), ""},
		"flipped byte in padding":  {flip(good, at+len(archive)+1), "archive"},
		"flipped byte at the end":  {flip(good, len(good)-5), "archive"},
		"truncated":                {good[:len(good)/2], "archive"},
		"truncated before the end": {good[:len(good)-600], "archive"},
		"flipped byte in manifest": {flip(good, bytes.Index(good, []byte(`"records_sha256"`))+20), ""},
	}
	for name, c := range cases {
		_, res := backup.Read(context.Background(), bytes.NewReader(c.b), nil)
		if res.OK {
			t.Errorf("%s: verify found nothing wrong", name)
			continue
		}
		if c.kind != "" && !hasKind(res, c.kind) {
			t.Errorf("%s: problems %+v, want one of kind %s", name, res.Problems, c.kind)
		}
		if _, _, err := restoreInto(t, c.b); err == nil || !strings.Contains(err.Error(), "nothing was restored") {
			t.Errorf("%s: restore err = %v", name, err)
		}
	}
}

func flip(b []byte, i int) []byte {
	out := append([]byte(nil), b...)
	out[i] ^= 0x01
	return out
}

func hasKind(res *backup.Result, kind string) bool {
	for _, p := range res.Problems {
		if p.Kind == kind {
			return true
		}
	}
	return false
}

// TestVerifyLeavesYoungOrphans: a deleted chart version's blob waits for
// the collection past the grace period; verify does not call it a
// problem meanwhile, and reports it once it is past.
func TestVerifyLeavesYoungOrphans(t *testing.T) {
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "r", "private")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	uploadWithProv(t, ts, "r", archive, nil)
	if r := ts.Do(t, http.MethodDelete, "/v1/repositories/r/charts/app/1.0.0", ts.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	var out struct{ Data backup.Result }
	ts.Do(t, http.MethodPost, "/v1/admin/verify", ts.AdminKey, nil).JSON(t, &out)
	if !out.Data.OK {
		t.Fatalf("verify with an orphan within the grace period: %+v", out.Data)
	}
	sum := sha256.Sum256(archive)
	h := hex.EncodeToString(sum[:])
	old := time.Now().Add(-2 * ts.App().BlobGrace())
	if err := os.Chtimes(filepath.Join(ts.Dir, "blobs", "sha256", h[:2], h), old, old); err != nil {
		t.Fatal(err)
	}
	ts.Do(t, http.MethodPost, "/v1/admin/verify", ts.AdminKey, nil).JSON(t, &out)
	if out.Data.OK || !hasKind(&out.Data, "orphan_blob") {
		t.Fatalf("verify with an orphan past the grace period: %+v", out.Data)
	}
}

func TestVerifyReportsOrphansAndDamage(t *testing.T) {
	ts := testkit.StartServer(t)
	// Keep the startup orphan sweep from removing the test's orphan.
	defer ts.App().HoldBlobDeletes()()
	ts.MustRepo(t, "r", "private")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	uploadWithProv(t, ts, "r", archive, nil)
	// An orphan blob, as a crash between blob and record leaves.
	w, err := ts.Blobs.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("orphan bytes"))
	orphan, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	// Past the grace period (a younger orphan awaits collection and is
	// not a problem).
	old := time.Now().Add(-2 * ts.App().BlobGrace())
	h := strings.TrimPrefix(orphan, "sha256:")
	if err := os.Chtimes(filepath.Join(ts.Dir, "blobs", "sha256", h[:2], h), old, old); err != nil {
		t.Fatal(err)
	}
	// Damage the chart's blob on disk.
	var cv struct{ Data struct{ Digest string } }
	ts.Do(t, http.MethodGet, "/v1/repositories/r/charts/app/1.0.0", ts.AdminKey, nil).JSON(t, &cv)
	var damaged string
	filepath.Walk(filepath.Join(ts.Dir, "blobs"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && strings.Contains(p, strings.TrimPrefix(cv.Data.Digest, "sha256:")) {
			damaged = p
		}
		return nil
	})
	if damaged == "" {
		t.Fatal("cannot find the chart's blob file")
	}
	b, _ := os.ReadFile(damaged)
	os.WriteFile(damaged, flip(b, len(b)/2), 0o644)

	v := ts.Do(t, http.MethodPost, "/v1/admin/verify", ts.AdminKey, nil)
	var out struct{ Data backup.Result }
	v.JSON(t, &out)
	if out.Data.OK || !hasKind(&out.Data, "blob_digest") || !hasKind(&out.Data, "orphan_blob") {
		t.Fatalf("verify: %s", v.Body)
	}
	for _, p := range out.Data.Problems {
		if p.Kind == "orphan_blob" && (p.Target != orphan || !strings.Contains(p.Detail, "12 bytes")) {
			t.Errorf("orphan reported as %+v, want %s with 12 bytes", p, orphan)
		}
	}
	// Admin only.
	dev := ts.MustUser(t, "dev@example.com", false)
	if r := ts.Do(t, http.MethodPost, "/v1/admin/verify", ts.MustKey(t, dev, "repo:read"), nil); r.StatusCode != 403 {
		t.Errorf("non-admin verify: %d", r.StatusCode)
	}
	if r := ts.Do(t, http.MethodGet, "/v1/admin/backup", ts.MustKey(t, dev, "repo:read"), nil); r.StatusCode != 403 {
		t.Errorf("non-admin backup: %d", r.StatusCode)
	}
	// A backup refuses to copy the damaged blob: the archive is cut short.
	r := ts.Do(t, http.MethodGet, "/v1/admin/backup", ts.AdminKey, nil)
	if _, res := backup.Read(context.Background(), bytes.NewReader(r.Body), nil); res.OK {
		t.Error("a backup of a damaged store verified")
	}
}
