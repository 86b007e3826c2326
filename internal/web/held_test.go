package web_test

import (
	"net/http"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
)

// TestHeldVersionNotOnTheDashboard: a version held for its signature is
// neither shown nor served by the dashboard to someone who may not push:
// its page, its download and its files answer 404, as /v1, Helm and OCI
// do (the chart's other versions stay).
func TestHeldVersionNotOnTheDashboard(t *testing.T) {
	c := setupCatalog(t)
	c.must(t, http.MethodPut, "/v1/repositories/platform-charts/policy", map[string]any{"require_signature": "any", "hold_window": "10m"})
	c.upload(t, "platform-charts", testkit.Chart{Name: "redis", Version: "1.3.0", Description: "In-memory store"})
	b := c.NewBrowser(t)
	for _, path := range []string{
		"/repositories/platform-charts/charts/redis/1.3.0",
		"/repositories/platform-charts/charts/redis/1.3.0/download",
		"/repositories/platform-charts/charts/redis/1.3.0/files/Chart.yaml",
	} {
		if p := b.Get(t, path); p.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404 for a held version", path, p.StatusCode)
		}
	}
	if p := b.Get(t, "/repositories/platform-charts/charts/redis/1.2.0/download"); p.StatusCode != http.StatusOK {
		t.Errorf("the released version: %d", p.StatusCode)
	}
}
