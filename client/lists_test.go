package client_test

import (
	"fmt"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/testkit"
)

// TestListsWalkEveryPage: the lists that once returned one page (webhooks
// and replications the first 100, trust entries the server's default 20,
// through a query parameter it does not know) return every item, from
// List as from All, against the real server.
func TestListsWalkEveryPage(t *testing.T) {
	s := testkit.StartServer(t)
	ctx := t.Context()
	c, err := client.New(s.URL, client.WithToken(s.AdminKey))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Repositories.Create(ctx, &client.CreateRepositoryRequest{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	const many, trusted = 105, 25
	scope := client.WebhookScope{Repository: "acme"}
	for i := range many {
		if _, _, err := c.Webhooks.Create(ctx, scope, &client.WebhookRequest{URL: fmt.Sprintf("https://ci.example.com/hook%d", i), Events: []string{"chart.pushed"}}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Replications.Create(ctx, &client.ReplicationRequest{Name: fmt.Sprintf("r%03d", i), Source: "acme", Target: fmt.Sprintf("oci://registry.example.com/acme%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	trust := client.TrustScope{Repository: "acme"}
	for i := range trusted {
		if _, _, err := c.Trust.Add(ctx, trust, &client.TrustRequest{Name: fmt.Sprintf("ci%02d", i), Kind: "cosign-keyless", Issuer: "https://token.actions.githubusercontent.com", Subject: fmt.Sprintf("https://github.com/acme/c%d", i)}); err != nil {
			t.Fatal(err)
		}
	}

	hooks, _, err := c.Webhooks.List(ctx, scope)
	if err != nil || len(hooks) != many {
		t.Errorf("Webhooks.List: %d webhooks, %v; want %d", len(hooks), err, many)
	}
	if all, err := client.Collect(c.Webhooks.All(ctx, scope)); err != nil || len(all) != many {
		t.Errorf("Webhooks.All: %d webhooks, %v; want %d", len(all), err, many)
	}
	reps, resp, err := c.Replications.List(ctx)
	if err != nil || len(reps) != many || reps[0].Name != "r000" || reps[many-1].Name != fmt.Sprintf("r%03d", many-1) {
		t.Errorf("Replications.List: %d replications, %v; want %d from r000", len(reps), err, many)
	}
	if resp == nil || resp.Meta == nil || resp.NextPage() != 0 {
		t.Errorf("Replications.List's response is not the last page's: %+v", resp)
	}
	if all, err := client.Collect(c.Replications.All(ctx)); err != nil || len(all) != many {
		t.Errorf("Replications.All: %d replications, %v; want %d", len(all), err, many)
	}
	entries, _, err := c.Trust.List(ctx, trust)
	if err != nil || len(entries) != trusted || entries[0].Name != "ci00" || entries[trusted-1].Name != fmt.Sprintf("ci%02d", trusted-1) {
		t.Errorf("Trust.List: %d entries, %v; want %d by name", len(entries), err, trusted)
	}
	if all, err := client.Collect(c.Trust.All(ctx, trust)); err != nil || len(all) != trusted {
		t.Errorf("Trust.All: %d entries, %v; want %d", len(all), err, trusted)
	}
}
