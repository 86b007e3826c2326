package server_test

import (
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/testkit"
)

// TestDownloadsCounted: archive downloads over the Helm protocol and /v1
// are counted (HEAD is not), shown on chart version items once flushed.
func TestDownloadsCounted(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "apps", "public")
	if r := s.Upload(t, "apps", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"}), ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	for i := 0; i < 3; i++ {
		if r := s.Do(t, "GET", "/helm/apps/charts/web-1.0.0.tgz", "", nil); r.StatusCode != 200 {
			t.Fatalf("helm download: %d", r.StatusCode)
		}
	}
	for i := 0; i < 2; i++ {
		if r := s.Do(t, "GET", "/v1/repositories/apps/charts/web/1.0.0/archive", s.AdminKey, nil); r.StatusCode != 200 {
			t.Fatalf("/v1 download: %d", r.StatusCode)
		}
	}
	s.Do(t, "HEAD", "/helm/apps/charts/web-1.0.0.tgz", "", nil)
	if err := s.App().FlushDownloads(t.Context()); err != nil {
		t.Fatal(err)
	}
	var one envelope[client.Chart]
	s.Do(t, "GET", "/v1/repositories/apps/charts/web/1.0.0", s.AdminKey, nil).JSON(t, &one)
	var list envelope[[]client.Chart]
	s.Do(t, "GET", "/v1/repositories/apps/charts", s.AdminKey, nil).JSON(t, &list)
	if one.Data.Downloads != 5 || len(list.Data) != 1 || list.Data[0].Downloads != 5 {
		t.Fatalf("downloads: one %d, list %+v", one.Data.Downloads, list.Data)
	}
}
