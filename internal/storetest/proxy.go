package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// testProxies checks proxy repositories: their settings are stored with
// the repository and read back by every read of it (the sealed password
// as opaque bytes), UpdateRepository replaces them on a proxy only, and
// an export carries them.
func testProxies(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	plain := mustRepo(t, s, "plain", "")
	if plain.Proxy != nil {
		t.Fatalf("an ordinary repository reads back as a proxy: %+v", plain.Proxy)
	}
	sealed := []byte{0, 1, 2, 0xff, 'x'}
	want := &chartctl.Proxy{URL: "https://charts.example.com/stable", Username: "reader", Password: sealed, TTL: 90 * time.Second,
		Include: []string{"ingress-*", "cert-manager"}, Exclude: []string{"*-test"}}
	must(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "cached", OwnerID: ada.ID, Proxy: want.Clone()}))
	check := func(what string, want *chartctl.Proxy) {
		t.Helper()
		got, err := s.Repository(ctx, "cached")
		must(t, err)
		if !reflect.DeepEqual(got.Proxy, want) {
			t.Fatalf("%s: proxy %+v, want %+v", what, got.Proxy, want)
		}
		repos, err := s.Repositories(ctx)
		must(t, err)
		for _, r := range repos {
			if (r.Name == "cached") != (r.Proxy != nil) {
				t.Fatalf("%s: Repositories: %s has proxy %+v", what, r.Name, r.Proxy)
			}
		}
	}
	check("created", want)

	next := &chartctl.Proxy{URL: "oci://ghcr.io/acme/charts", TTL: time.Hour}
	r, err := s.UpdateRepository(ctx, "cached", chartctl.RepositoryUpdate{Proxy: next.Clone()})
	must(t, err)
	if r.Proxy == nil || r.Proxy.URL != next.URL || r.Proxy.Password != nil || len(r.Proxy.Include) != 0 {
		t.Fatalf("updated: %+v", r.Proxy)
	}
	check("updated", next.Clone())

	// A description change leaves the proxy as it is.
	desc := "Cached charts"
	_, err = s.UpdateRepository(ctx, "cached", chartctl.RepositoryUpdate{Description: &desc})
	must(t, err)
	check("after a description change", next.Clone())

	// Proxy settings for an ordinary repository are refused.
	_, err = s.UpdateRepository(ctx, "plain", chartctl.RepositoryUpdate{Proxy: next.Clone()})
	if chartctl.ErrorCode(err) != chartctl.EINVALID {
		t.Fatalf("proxy settings on an ordinary repository: %v", err)
	}
	if got, err := s.Repository(ctx, "plain"); err != nil || got.Proxy != nil {
		t.Fatalf("plain after a refused update: %+v, %v", got, err)
	}
}
