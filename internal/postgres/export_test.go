package postgres_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// TestExport dumps every record kind in dependency order from one
// snapshot: records written while the dump runs (on other connections, as
// another replica would) are not in it.
func TestExport(t *testing.T) {
	db := mustOpen(t)
	u := &chartctl.User{Email: "a@example.com"}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.CreateUser(ctx, u))
	must(db.CreateAPIKey(ctx, &chartctl.APIKey{UserID: u.ID, Name: "k", Hash: []byte("h")}))
	must(db.CreateOAuthClient(ctx, &chartctl.OAuthClient{ID: "cli", Name: "CLI", Public: true}))
	must(db.CreateOrganization(ctx, &chartctl.Organization{Name: "acme"}))
	must(db.CreateRepository(ctx, &chartctl.Repository{Name: "apps", Organization: "acme"}))
	must(db.CreateTeam(ctx, &chartctl.Team{Name: "devs", Organization: "acme"}))
	must(db.AddMember(ctx, &chartctl.Member{Team: "devs", Email: "b@example.com"}))
	for _, v := range []string{"1.0.0", "2.0.0"} {
		_, _, _, err := db.PutChartVersion(ctx, &chartctl.ChartVersion{Repository: "apps", Name: "web", Version: v, Digest: "sha256:" + v,
			Size: 10, ProvDigest: "sha256:prov" + v, ProvSize: 3, Metadata: []byte(`{"name":"web"}`), IndexEntry: []byte("name: web\n")}, chartctl.PutVersionOptions{})
		must(err)
	}
	var kinds []string
	snapshots := 0
	err := db.Export(ctx, func() { snapshots++ }, func(r chartctl.DumpRecord) error {
		if len(kinds) == 0 {
			// Written after the snapshot: not exported.
			if err := db.CreateUser(ctx, &chartctl.User{Email: "late@example.com"}); err != nil {
				return err
			}
			if _, _, _, err := db.PutChartVersion(ctx, &chartctl.ChartVersion{Repository: "apps", Name: "web", Version: "3.0.0",
				Digest: "sha256:late", Size: 1}, chartctl.PutVersionOptions{}); err != nil {
				return err
			}
		}
		switch {
		case r.User != nil:
			kinds = append(kinds, "user:"+r.User.Email)
		case r.APIKey != nil:
			kinds = append(kinds, "key")
		case r.OAuthClient != nil:
			kinds = append(kinds, "client")
		case r.Organization != nil:
			kinds = append(kinds, "org")
		case r.Repository != nil:
			kinds = append(kinds, "repo")
		case r.Team != nil:
			kinds = append(kinds, "team")
		case r.Member != nil:
			kinds = append(kinds, "member:"+r.Member.Team)
		case r.ChartVersion != nil:
			cv := r.ChartVersion
			if cv.Repository != "apps" || string(cv.IndexEntry) != "name: web\n" || string(cv.Metadata) != `{"name":"web"}` ||
				cv.ProvSize != 3 || cv.ProvDigest == "" {
				t.Errorf("chart %+v", cv)
			}
			kinds = append(kinds, "chart:"+cv.Version)
		}
		return nil
	})
	must(err)
	want := []string{"user:a@example.com", "key", "client", "org", "repo", "team", "member:devs", "chart:1.0.0", "chart:2.0.0"}
	if snapshots != 1 || !slices.Equal(kinds, want) {
		t.Fatalf("snapshots %d, exported %v, want %v", snapshots, kinds, want)
	}
	// A failing fn stops the export with its error.
	stop := fmt.Errorf("stop")
	if err := db.Export(ctx, nil, func(chartctl.DumpRecord) error { return stop }); err == nil {
		t.Fatal("Export went on after fn failed")
	}
}
