package app_test

import (
	"context"
	"testing"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/testkit"
)

// TestSearchCandidatesFollowChanges: the kept search candidates change
// at once with an upload, a delete and a repository's deletion made
// through App, and on another replica when it hears of the change
// (RefreshIndexVersion, InvalidateIndex), as the Helm index does. The
// newest version is what the text matches; the newest stable is shown.
func TestSearchCandidatesFollowChanges(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			ctx := context.Background()
			a, b := twoReplicas(t, e.open, app.Options{Config: app.Config{MaxChartSize: 1 << 20}})
			r := mustRepo(t, a, "apps")
			shown := func(x *app.App) map[string]string {
				t.Helper()
				cs, err := x.SearchCandidates(ctx, "apps")
				if err != nil {
					t.Fatal(err)
				}
				out := map[string]string{}
				for _, c := range cs {
					shown, _, err := c.Shown(ctx, x.Store)
					if err != nil {
						t.Fatal(err)
					}
					out[c.Newest.Name] = c.Newest.Version + "/" + shown.Version
				}
				return out
			}
			if _, err := push(t, a, r, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})); err != nil {
				t.Fatal(err)
			}
			if got := shown(a)["web"]; got != "1.0.0/1.0.0" {
				t.Fatalf("after the first upload: %q", got)
			}
			if got := shown(b)["web"]; got != "1.0.0/1.0.0" {
				t.Fatalf("other replica: %q", got)
			}
			if _, err := push(t, a, r, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "2.0.0-rc.1"})); err != nil {
				t.Fatal(err)
			}
			if _, err := push(t, a, r, testkit.MakeChart(t, testkit.Chart{Name: "db", Version: "0.1.0"})); err != nil {
				t.Fatal(err)
			}
			if got := shown(a); got["web"] != "2.0.0-rc.1/1.0.0" || got["db"] != "0.1.0/0.1.0" {
				t.Fatalf("after two more uploads: %v", got)
			}
			// The other replica hears of it.
			b.RefreshIndexVersion(ctx, "apps", "web", "2.0.0-rc.1")
			if got := shown(b)["web"]; got != "2.0.0-rc.1/1.0.0" {
				t.Fatalf("other replica after the refresh: %q", got)
			}
			if _, err := a.DeleteChart(ctx, r, "db", "0.1.0"); err != nil {
				t.Fatal(err)
			}
			if got := shown(a); len(got) != 1 {
				t.Fatalf("after the delete: %v", got)
			}
			if err := a.DeleteRepository(ctx, r); err != nil {
				t.Fatal(err)
			}
			if got := shown(a); len(got) != 0 {
				t.Fatalf("after the repository's deletion: %v", got)
			}
			b.InvalidateIndex("apps")
			if got := shown(b); len(got) != 0 {
				t.Fatalf("other replica after the repository's deletion: %v", got)
			}
		})
	}
}
