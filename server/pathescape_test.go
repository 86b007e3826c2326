package server_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
)

// Clients that escape every reserved character of a path segment
// (JavaScript's encodeURIComponent, Python's quote(safe="")) send a
// build-metadata version as 1.0.0%2Bbuild.1 and an email as
// ada%40example.com. Those name the same resources as the unescaped
// forms, on /v1 and on the Helm and ChartMuseum paths.
func TestPercentEncodedPathSegments(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "stable", "")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0+build.1"})
	if r := s.Upload(t, "stable", s.AdminKey, archive, ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	escaped := "1.0.0%2Bbuild.1"

	for _, path := range []string{
		"/v1/repositories/st%61ble",
		"/v1/repositories/stable/charts/%61pp",
		"/v1/repositories/stable/charts/app/" + escaped,
		"/v1/repositories/stable/charts/app/" + escaped + "/archive",
	} {
		if r := s.Do(t, http.MethodGet, path, s.AdminKey, nil); r.StatusCode != 200 {
			t.Errorf("GET %s: %d %s", path, r.StatusCode, r.Body)
		}
	}
	helm := func(method, path string) *testkit.Response {
		t.Helper()
		req, err := http.NewRequest(method, s.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("x", s.AdminKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		if _, err := b.ReadFrom(resp.Body); err != nil {
			t.Fatal(err)
		}
		return &testkit.Response{Response: resp, Body: b.Bytes()}
	}
	if r := helm(http.MethodGet, "/helm/stable/charts/app-"+escaped+".tgz"); r.StatusCode != 200 || !bytes.Equal(r.Body, archive) {
		t.Errorf("Helm download of the escaped file name: %d %s", r.StatusCode, r.Body)
	}
	if r := helm(http.MethodGet, "/helm/api/stable/charts/app/"+escaped); r.StatusCode != 200 {
		t.Errorf("ChartMuseum version of the escaped version: %d %s", r.StatusCode, r.Body)
	}

	// A user whose email has a '+' and an '@', escaped.
	if r := s.DoJSON(t, http.MethodPost, "/v1/users", s.AdminKey, map[string]any{"email": "dev+ci@example.com"}); r.StatusCode != 200 {
		t.Fatalf("create user: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Do(t, http.MethodGet, "/v1/users/dev%2Bci%40example.com/api-keys", s.AdminKey, nil); r.StatusCode != 200 {
		t.Errorf("keys of the escaped email: %d %s", r.StatusCode, r.Body)
	}
	if r := s.DoJSON(t, http.MethodPatch, "/v1/users/dev%2Bci%40example.com", s.AdminKey, map[string]any{"disabled": true}); r.StatusCode != 200 {
		t.Errorf("disable the escaped email: %d %s", r.StatusCode, r.Body)
	}

	// A not-found message quotes what the caller meant, not its escaping.
	r := s.Do(t, http.MethodGet, "/v1/repositories/stable/charts/app/2.0.0%2Bbuild.9", s.AdminKey, nil)
	expectError(t, r, 404, "not_found", "")
	if !bytes.Contains(r.Body, []byte(`\"2.0.0+build.9\"`)) {
		t.Errorf("404 message: %s", r.Body)
	}

	// Deleting by the escaped version deletes it.
	if r := s.Do(t, http.MethodDelete, "/v1/repositories/stable/charts/app/"+escaped, s.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	expectError(t, s.Do(t, http.MethodGet, "/v1/repositories/stable/charts/app/1.0.0+build.1", s.AdminKey, nil), 404, "not_found", "")
}
