package client_test

import (
	"context"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// TestMirrorRoundTrip creates a mirror, changes its settings and asks
// for a sync through the real SDK against the real server.
func TestMirrorRoundTrip(t *testing.T) {
	s := testkit.StartServer(t, func(srv *server.Server) { srv.Config.AllowPrivateUpstreams = true })
	ctx := context.Background()
	c, err := client.New(s.URL, client.WithToken(s.AdminKey))
	if err != nil {
		t.Fatal(err)
	}
	str := func(v string) *string { return &v }
	repo, _, err := c.Repositories.Create(ctx, &client.CreateRepositoryRequest{Name: "up", Mirror: &client.MirrorRequest{
		URL: str("http://127.0.0.1:9/charts"), Interval: str("12h"), Username: str("bot"), Password: str("pw")}})
	if err != nil {
		t.Fatal(err)
	}
	if m := repo.Mirror; m == nil || m.URL != "http://127.0.0.1:9/charts" || m.Interval != "12h" || m.Username != "bot" || m.Status != client.MirrorStatusSyncing {
		t.Fatalf("created %+v", repo.Mirror)
	}
	repo, _, err = c.Repositories.Update(ctx, "up", &client.UpdateRepositoryRequest{Description: str("Upstream"), Mirror: &client.MirrorRequest{Interval: str("2d"), Username: str("")}})
	if err != nil {
		t.Fatal(err)
	}
	if m := repo.Mirror; repo.Description != "Upstream" || m.Interval != "2d" || m.Username != "" || m.URL != "http://127.0.0.1:9/charts" {
		t.Fatalf("updated %+v %+v", repo, repo.Mirror)
	}
	repo, resp, err := c.Repositories.Sync(ctx, "up")
	if err != nil || resp.StatusCode != 200 || repo.Mirror.Status != client.MirrorStatusSyncing {
		t.Fatalf("sync: %v %+v", err, repo)
	}
	plain, _, err := c.Repositories.Create(ctx, &client.CreateRepositoryRequest{Name: "plain"})
	if err != nil || plain.Mirror != nil {
		t.Fatalf("plain: %v %+v", err, plain)
	}
	if _, _, err := c.Repositories.Sync(ctx, "plain"); !client.IsConflict(err) {
		t.Fatalf("sync of a plain repository: %v", err)
	}
}
