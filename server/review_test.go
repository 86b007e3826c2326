package server_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
)

// A page number so large that page × limit overflows is past the end, not
// a panic answered with 500.
func TestPageFarPastTheEnd(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "r", "")
	if r := s.Upload(t, "r", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "a", Version: "1.0.0"}), ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	for _, p := range []string{
		"/v1/repositories/r/charts?page=9223372036854775807&limit=100",
		"/v1/repositories/r/charts?page=9223372036854775807&limit=100&name=a",
		"/v1/repositories/r/charts/a?page=9223372036854775807&limit=3",
		"/v1/repositories?page=9223372036854775807&limit=100",
		"/v1/search?q=a&page=9223372036854775807&limit=100",
	} {
		r := s.Do(t, http.MethodGet, p, s.AdminKey, nil)
		if r.StatusCode != 200 || !bytes.Contains(r.Body, []byte(`"data":[]`)) {
			t.Errorf("GET %s = %d %s, want 200 with an empty page", p, r.StatusCode, r.Body)
		}
	}
}
