package server_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
)

// uploadCreatedAt uploads archive with the form field created_at.
func uploadCreatedAt(t *testing.T, ts *testkit.Server, repo, key string, archive []byte, createdAt string) *testkit.Response {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if err := w.WriteField("created_at", createdAt); err != nil {
		t.Fatal(err)
	}
	fw, err := w.CreateFormFile("chart", "chart.tgz")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(archive)
	w.Close()
	return ts.Do(t, http.MethodPost, "/v1/repositories/"+repo+"/charts", key, &buf, "Content-Type", w.FormDataContentType())
}

// CONTRACT §14: created_at keeps an imported version's time, from a
// credential with the admin scope only.
func TestUploadCreatedAt(t *testing.T) {
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "stable", "private")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})

	r := uploadCreatedAt(t, ts, "stable", ts.AdminKey, archive, "2020-02-03T04:05:06.789Z")
	if r.StatusCode != 200 {
		t.Fatalf("admin upload with created_at: %d %s", r.StatusCode, r.Body)
	}
	var got struct {
		Data struct {
			CreatedAt string `json:"created_at"`
		} `json:"data"`
	}
	r.JSON(t, &got)
	if got.Data.CreatedAt != "2020-02-03T04:05:06.789Z" && !strings.HasPrefix(got.Data.CreatedAt, "2020-02-03T04:05:06") {
		t.Errorf("created_at answered %q", got.Data.CreatedAt)
	}
	cv, err := ts.Store.ChartVersion(context.Background(), "stable", "app", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2020, 2, 3, 4, 5, 6, 789e6, time.UTC); !cv.CreatedAt.Equal(want) {
		t.Errorf("stored created %s, want %s", cv.CreatedAt, want)
	}

	// Anyone else, even the repository's owner with every scope: 403
	// naming the admin scope, and nothing stored.
	dev := ts.MustUser(t, "dev@example.com", false)
	devKey := ts.MustKey(t, dev, chartctl.AllScopes...)
	if r := ts.DoJSON(t, http.MethodPost, "/v1/repositories", devKey, map[string]string{"name": "mine"}); r.StatusCode != 200 {
		t.Fatalf("create repo: %d %s", r.StatusCode, r.Body)
	}
	r = uploadCreatedAt(t, ts, "mine", devKey, archive, "2020-02-03T04:05:06Z")
	if r.StatusCode != 403 || r.ErrorCode() != "forbidden" || !strings.Contains(string(r.Body), "admin scope") {
		t.Fatalf("non-admin created_at: %d %s", r.StatusCode, r.Body)
	}
	if _, err := ts.Store.ChartVersion(context.Background(), "mine", "app", "1.0.0"); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Errorf("the refused upload was stored: %v", err)
	}
	// An admin whose key lacks scopes is refused too.
	narrow := ts.MustKey(t, ts.Admin, chartctl.ScopeRepoRead, chartctl.ScopeRepoWrite)
	r = uploadCreatedAt(t, ts, "stable", narrow, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "2.0.0"}), "2020-02-03T04:05:06Z")
	if r.StatusCode != 403 || !strings.Contains(string(r.Body), "admin scope") {
		t.Fatalf("narrow admin key created_at: %d %s", r.StatusCode, r.Body)
	}

	// An admin whose key holds every scope but admin is refused: the admin
	// scope, not the set of the original scopes, is what created_at needs.
	noAdmin := ts.MustKey(t, ts.Admin, append(append([]chartctl.Scope{}, chartctl.OriginalScopes...), chartctl.ScopeKeysWrite)...)
	r = uploadCreatedAt(t, ts, "stable", noAdmin, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "2.0.1"}), "2020-02-03T04:05:06Z")
	if r.StatusCode != 403 || !strings.Contains(string(r.Body), "admin scope") {
		t.Fatalf("admin key without the admin scope, created_at: %d %s", r.StatusCode, r.Body)
	}
	// Only the admin scope is needed beside the upload's own repo:write.
	adminScoped := ts.MustKey(t, ts.Admin, chartctl.ScopeRepoWrite, chartctl.ScopeAdmin)
	r = uploadCreatedAt(t, ts, "stable", adminScoped, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "2.0.2"}), "2020-02-03T04:05:06Z")
	if r.StatusCode != 200 {
		t.Fatalf("admin key with repo:write and admin, created_at: %d %s", r.StatusCode, r.Body)
	}
	r = uploadCreatedAt(t, ts, "stable", ts.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "3.0.0"}), "yesterday")
	if r.StatusCode != 400 || !strings.Contains(string(r.Body), "RFC 3339") {
		t.Fatalf("bad created_at: %d %s", r.StatusCode, r.Body)
	}
}
