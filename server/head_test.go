package server_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
)

// HEAD answers wherever a monitor or a CI script sends it: the probes
// (uptime monitors probe with HEAD), and ChartMuseum's "does this chart,
// or this version, exist" checks (HEAD /api/charts/NAME[/VERSION] in
// ChartMuseum's API), with GET's status and no body.
func TestHeadRequests(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "stable", "")
	if r := s.Upload(t, "stable", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"}), ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	head := func(path string, basic bool) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodHead, s.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if basic {
			req.SetBasicAuth("ci", s.AdminKey)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if b, _ := io.ReadAll(resp.Body); len(b) != 0 {
			t.Errorf("HEAD %s sent a body: %q", path, b)
		}
		return resp.StatusCode
	}
	for _, c := range []struct {
		path  string
		basic bool
		want  int
	}{
		{"/livez", false, 200},
		{"/healthz", false, 200},
		{"/readyz", false, 200},
		{"/helm/api/stable/charts/app", true, 200},
		{"/helm/api/stable/charts/app/1.0.0", true, 200},
		{"/helm/api/stable/charts/app/9.9.9", true, 404},
		{"/helm/api/stable/charts/nope", true, 404},
		{"/helm/api/stable/charts/app/1.0.0", false, 401},
	} {
		if got := head(c.path, c.basic); got != c.want {
			t.Errorf("HEAD %s (credential %v) = %d, want %d", c.path, c.basic, got, c.want)
		}
	}
}
