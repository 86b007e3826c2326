package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/testkit"
)

// TestAgainstRealServer browses a real in-process server through the real
// SDK: repositories → charts → versions → detail, then teams → members.
func TestAgainstRealServer(t *testing.T) {
	srv := testkit.StartServer(t)
	srv.MustRepo(t, "stable", "public")
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if r := srv.Upload(t, "stable", srv.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "redis", Version: v, Description: "Key-value store",
			Extra: "home: https://redis.io\nmaintainers:\n  - name: Jane Doe\n    email: jane@example.com\n"}), ""); r.StatusCode != 200 {
			t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
		}
	}
	c, err := client.New(srv.URL, client.WithToken(srv.AdminKey))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, _, err := c.Organizations.Create(ctx, &client.CreateOrganizationRequest{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Teams.Create(ctx, &client.CreateTeamRequest{Name: "platform", Organization: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Teams.AddMember(ctx, "platform", &client.AddMemberRequest{Email: "dev@acme.test", Role: "maintainer"}); err != nil {
		t.Fatal(err)
	}

	s := setupSession(t, NewClientAPI(c), 100, 30)
	s.waitFor("stable")
	s.press("enter")
	s.waitFor("Key-value store")
	s.press("enter")
	s.waitFor("1.0.0")
	s.press("enter")
	// The maintainers come from the version's own endpoint.
	s.waitFor("Jane Doe <jane@example.com>")
	s.press("tab")
	s.waitFor("platform")
	s.press("enter")
	s.waitFor("dev@acme.test")
	view := s.finish()
	if !strings.Contains(view, "maintainer") {
		t.Fatalf("members view:\n%s", view)
	}
}
