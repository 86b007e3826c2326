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
// an export carries them. A proxy's cached versions count toward no
// quota usage (decision 12), and a download count of zero records a use
// (a fill) without counting a download.
func testProxies(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	plain := mustRepo(t, s, "plain", "")
	if plain.Proxy != nil {
		t.Fatalf("an ordinary repository reads back as a proxy: %+v", plain.Proxy)
	}
	sealed := []byte{0, 1, 2, 0xff, 'x'}
	want := &chartctl.Proxy{URL: "https://charts.example.com/stable", Username: "reader", Password: sealed, TTL: 90 * time.Second,
		Retention: 45 * 24 * time.Hour, Include: []string{"ingress-*", "cert-manager"}, Exclude: []string{"*-test"}}
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

	// The cache counts toward no usage, the organization's included.
	acme := mustOrg(t, s, "acme", ada.ID)
	must(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "acme-cache", OwnerID: ada.ID, Organization: acme.Name, Proxy: want.Clone()}))
	one := int64(1)
	must(t, s.SetQuota(ctx, chartctl.QuotaOrganization, acme.Name, chartctl.Quota{MaxVersions: &one}))
	mustPut(t, s, chart("acme-cache", "web", "1.0.0"))
	mustPut(t, s, chart("acme-cache", "web", "2.0.0"))
	for _, sc := range [][2]string{{chartctl.QuotaRepository, "acme-cache"}, {chartctl.QuotaOrganization, acme.Name}} {
		_, u, err := s.Quota(ctx, sc[0], sc[1])
		must(t, err)
		if u.Bytes != 0 || u.Versions != 0 {
			t.Fatalf("%s %s usage counts a proxy's cache: %+v", sc[0], sc[1], u)
		}
	}
	filled := base.Add(3 * time.Hour)
	must(t, s.AddDownloads(ctx, []chartctl.DownloadCount{{Repository: "acme-cache", Name: "web", Version: "1.0.0", Last: filled}}))
	cv, err := s.ChartVersion(ctx, "acme-cache", "web", "1.0.0")
	must(t, err)
	if cv.Downloads != 0 || cv.LastDownloadedAt == nil || !sameTime(*cv.LastDownloadedAt, filled) {
		t.Fatalf("a use without a download: %d %v", cv.Downloads, cv.LastDownloadedAt)
	}
	_, _, err = s.DeleteChartVersion(ctx, "acme-cache", "web", "2.0.0")
	must(t, err)
	_, err = s.DeleteRepository(ctx, "acme-cache")
	must(t, err)
	_, u, err := s.Quota(ctx, chartctl.QuotaOrganization, acme.Name)
	must(t, err)
	if u.Bytes != 0 || u.Versions != 0 {
		t.Fatalf("organization usage after the proxy went: %+v", u)
	}

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
