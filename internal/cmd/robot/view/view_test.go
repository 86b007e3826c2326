package view

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// view shows last use, expiry and patterns, the user name quoted for
// shells, and says when the creator's account is gone.
func TestViewRun(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	used, exp := now.Add(-3*time.Hour), now.AddDate(0, 0, 60)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/organizations/acme/robots/ci-push" {
			t.Errorf("path %s", r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": client.Robot{Name: "ci-push", Organization: "acme",
			UserName: "robot$acme+ci-push", Description: "pushes from CI", Repositories: []string{"acme-*"},
			Permissions: []string{"pull", "push"}, LastUsedAt: &used, ExpiresAt: &exp, CreatedAt: now.AddDate(0, -1, 0)}})
	}))
	defer hs.Close()
	ios, _, out, _ := iostreams.Test()
	ios.SetStdoutTTY(true)
	err := viewRun(t.Context(), &ViewOptions{IO: ios, Now: func() time.Time { return now }, Name: "ci-push", Organization: "acme",
		Client: func() (*client.Client, error) { return client.New(hs.URL, client.WithToken("k")) }})
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, s := range []string{
		"pushes from CI",
		"user name:    'robot$acme+ci-push'\n",
		"repositories: acme-*\n",
		"permissions:  pull,push\n",
		"status:       active\n",
		"last used:    2026-11-28 09:00:00 UTC (3 hours ago)\n",
		"expires:      2027-01-27 12:00:00 UTC (in 2 months)\n",
		"by (account deleted)\n",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("output lacks %q:\n%s", s, got)
		}
	}
}
