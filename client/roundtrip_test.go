package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/testkit"
)

// TestRoundTripAgainstRealServer drives every endpoint through the real
// SDK against the real server over HTTP.
func TestRoundTripAgainstRealServer(t *testing.T) {
	s := testkit.StartServer(t)
	ctx := context.Background()
	c, err := client.New(s.URL, client.WithToken(s.AdminKey))
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	me, resp, err := c.Users.Me(ctx)
	check("users.me", err)
	if me.Email != "admin@example.com" || !me.Admin || resp.RequestID == "" || resp.Rate.Limit != 1000 {
		t.Fatalf("me = %+v, rate %+v", me, resp.Rate)
	}

	org, _, err := c.Organizations.Create(ctx, &client.CreateOrganizationRequest{Name: "acme"})
	check("orgs.create", err)
	orgs, _, err := c.Organizations.List(ctx, nil)
	check("orgs.list", err)
	if len(orgs) != 1 || orgs[0].ID != org.ID {
		t.Fatalf("orgs = %+v", orgs)
	}

	repo, _, err := c.Repositories.Create(ctx, &client.CreateRepositoryRequest{Name: "stable", Organization: "acme", Visibility: "public"})
	check("repos.create", err)
	if repo.Organization == nil || *repo.Organization != "acme" || repo.Visibility != "public" {
		t.Fatalf("repo = %+v", repo)
	}
	got, _, err := c.Repositories.Get(ctx, "stable")
	check("repos.get", err)
	if got.ID != repo.ID {
		t.Fatalf("get = %+v", got)
	}
	n := 0
	for r, err := range c.Repositories.All(ctx) {
		check("repos.all", err)
		n++
		_ = r
	}
	if n != 1 {
		t.Fatalf("All yielded %d", n)
	}

	archive := testkit.MakeChart(t, testkit.Chart{Name: "nginx", Version: "1.2.3", Keywords: []string{"web"}})
	var lastSent, total int64
	up, _, err := c.Charts.Upload(ctx, "stable", bytes.NewReader(archive), &client.UploadOptions{
		Progress: func(sent, tot int64) { lastSent, total = sent, tot },
	})
	check("charts.upload", err)
	if up.Name != "nginx" || up.Version != "1.2.3" || up.Size != int64(len(archive)) || lastSent != int64(len(archive)) || total != int64(len(archive)) {
		t.Fatalf("upload = %+v progress %d/%d", up, lastSent, total)
	}
	list, resp, err := c.Charts.List(ctx, "stable", &client.ChartListOptions{Name: "nginx"})
	check("charts.list", err)
	if len(list) != 1 || list[0].Digest != up.Digest || resp.Meta == nil || resp.Meta.Total != 1 {
		t.Fatalf("list = %+v meta %+v", list, resp.Meta)
	}
	vers, _, err := c.Charts.Versions(ctx, "stable", "nginx", nil)
	check("charts.versions", err)
	if len(vers) != 1 {
		t.Fatalf("versions = %+v", vers)
	}
	one, _, err := c.Charts.Get(ctx, "stable", "nginx", "1.2.3")
	check("charts.get", err)
	if one.Digest != up.Digest {
		t.Fatalf("get = %+v", one)
	}
	var buf bytes.Buffer
	_, err = c.Charts.Download(ctx, "stable", "nginx", "1.2.3", &buf)
	check("charts.download", err)
	if !bytes.Equal(buf.Bytes(), archive) {
		t.Fatal("download differs")
	}
	found, _, err := c.Search.Charts(ctx, "web", nil)
	check("search", err)
	if len(found) != 1 || found[0].Repository != "stable" {
		t.Fatalf("search = %+v", found)
	}

	team, _, err := c.Teams.Create(ctx, &client.CreateTeamRequest{Name: "platform", Organization: "acme"})
	check("teams.create", err)
	m, _, err := c.Teams.AddMember(ctx, "platform", &client.AddMemberRequest{Email: "dev@acme.test", Role: "maintainer"})
	check("teams.addmember", err)
	m, _, err = c.Teams.UpdateMember(ctx, "platform", m.ID, &client.UpdateMemberRequest{Role: "owner"})
	check("teams.updatemember", err)
	if m.Role != "owner" {
		t.Fatalf("member = %+v", m)
	}
	members, _, err := c.Teams.Members(ctx, "platform", nil)
	check("teams.members", err)
	if len(members) != 1 {
		t.Fatalf("members = %+v", members)
	}
	tm, _, err := c.Teams.Get(ctx, "platform")
	check("teams.get", err)
	if tm.ID != team.ID || tm.MemberCount != 1 {
		t.Fatalf("team = %+v", tm)
	}
	teams, _, err := c.Teams.List(ctx, &client.TeamListOptions{Organization: "acme"})
	check("teams.list", err)
	if len(teams) != 1 {
		t.Fatalf("teams = %+v", teams)
	}
	_, err = c.Teams.RemoveMember(ctx, "platform", "dev@acme.test")
	check("teams.removemember", err)

	user, _, err := c.Users.Create(ctx, &client.CreateUserRequest{Email: "ci@acme.test"})
	check("users.create", err)
	ciKey, _, err := c.Users.CreateAPIKey(ctx, user.Email, &client.CreateAPIKeyRequest{Name: "ci", Scopes: []string{"repo:read"}})
	check("users.createapikey", err)
	if ciKey.Key == "" {
		t.Fatal("no key value")
	}
	key, _, err := c.APIKeys.Create(ctx, &client.CreateAPIKeyRequest{Name: "laptop", Scopes: []string{"repo:read", "team:read"}})
	check("apikeys.create", err)
	keys, _, err := c.APIKeys.List(ctx, nil)
	check("apikeys.list", err)
	if len(keys) != 2 {
		t.Fatalf("keys = %+v", keys)
	}
	_, err = c.APIKeys.Revoke(ctx, key.ID)
	check("apikeys.revoke", err)
	revoked, _ := client.New(s.URL, client.WithToken(key.Key), client.WithMaxRetries(0))
	if _, _, err := revoked.Users.Me(ctx); !client.IsUnauthorized(err) {
		t.Fatalf("revoked key: %v", err)
	}

	rl, _, err := c.RateLimit.Get(ctx, "stable")
	check("ratelimit", err)
	if rl.Resources["upload"].Used != 1 {
		t.Fatalf("rate limits = %+v", rl)
	}

	_, err = c.Charts.Delete(ctx, "stable", "nginx", "1.2.3")
	check("charts.delete", err)
	_, _, err = c.Charts.Get(ctx, "stable", "nginx", "1.2.3")
	var apiErr *client.Error
	if !client.IsNotFound(err) {
		t.Fatalf("after delete: %v", err)
	}
	_, err = c.Repositories.Delete(ctx, "stable")
	check("repos.delete", err)

	// Errors carry the contract's fields.
	_, _, err = c.Repositories.Create(ctx, &client.CreateRepositoryRequest{Name: "Bad Name"})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "invalid_parameter" || apiErr.Parameter != "name" || apiErr.RequestID == "" {
		t.Fatalf("error = %#v", err)
	}
}

func TestCollect(t *testing.T) {
	s := testkit.StartServer(t)
	c, _ := client.New(s.URL, client.WithToken(s.AdminKey))
	ctx := context.Background()
	repos, err := client.Collect(c.Repositories.All(ctx))
	if err != nil || repos == nil || len(repos) != 0 {
		t.Fatalf("empty: %v %v", repos, err)
	}
	for i := 0; i < 3; i++ {
		s.MustRepo(t, fmt.Sprintf("r%d", i), "")
	}
	if repos, err = client.Collect(c.Repositories.All(ctx)); err != nil || len(repos) != 3 {
		t.Fatalf("three: %v %v", repos, err)
	}
	bad, _ := client.New(s.URL, client.WithToken("chartctl_nope"), client.WithMaxRetries(0))
	if _, err := client.Collect(bad.Repositories.All(ctx)); !client.IsUnauthorized(err) {
		t.Fatalf("error: %v", err)
	}
}
