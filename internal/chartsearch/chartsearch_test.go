package chartsearch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartsearch"
)

// TestHitIsLatestStable: a search hit shows the chart's newest stable
// version, as chart view, the dashboard and the TUI do (CONTRACT §18,
// decision 20), even when a newer pre-release is stored; a chart with only
// pre-releases shows its newest. Against a real bbolt file.
func TestHitIsLatestStable(t *testing.T) {
	ctx := context.Background()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "chartctl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u := &chartctl.User{Email: "ann@example.com"}
	if err := db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateRepository(ctx, &chartctl.Repository{Name: "charts", OwnerID: u.ID, Visibility: chartctl.VisibilityPublic}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct{ name, version string }{
		{"web", "1.0.0"}, {"web", "1.1.0"}, {"web", "2.0.0-rc.1"}, {"webhooks", "0.1.0-alpha.1"}, {"webhooks", "0.2.0-alpha.1"},
	} {
		cv := &chartctl.ChartVersion{Repository: "charts", Name: v.name, Version: v.version, Description: "a chart",
			Digest:     fmt.Sprintf("sha256:%064x", len(v.name)*100+len(v.version)),
			Size:       10,
			Metadata:   json.RawMessage(fmt.Sprintf(`{"apiVersion":"v2","name":%q,"version":%q}`, v.name, v.version)),
			IndexEntry: []byte("name: " + v.name + "\nversion: " + v.version + "\n")}
		if _, _, _, err := db.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	hits, err := chartsearch.Search(ctx, db, nil, &chartctl.Principal{User: u}, chartsearch.Query{Text: "web"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, h := range hits {
		got[h.Version.Name] = h.Version.Version
	}
	if got["web"] != "1.1.0" || got["webhooks"] != "0.2.0-alpha.1" || len(hits) != 2 {
		t.Fatalf("hits %v, want web 1.1.0 and webhooks 0.2.0-alpha.1", got)
	}
}
