package proxy_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/chartctl/chartctl/client"
)

// BenchmarkPull compares a pull (GET of the archive over /helm) of a
// cached chart from a proxy repository with the same pull from an
// ordinary repository on the same server, and times a revalidation of
// the index (a conditional request the upstream answers 304).
// Figures: docs/performance.md.
func BenchmarkPull(b *testing.B) {
	up := startUpstream(b)
	e := setup(b, allowAll, hostOf(b, up.front.URL))
	e.mustProxy(b, "px", client.ProxyRequest{URL: str(up.front.URL + "/helm/charts"), TTL: str("1s")})
	e.MustRepo(b, "plain", "public")
	if r := e.Upload(b, "plain", e.AdminKey, up.archives["web-1.0.0.tgz"], ""); r.StatusCode != 200 {
		b.Fatalf("push: %d", r.StatusCode)
	}
	get := func(b *testing.B, path string) {
		resp, err := http.Get(e.URL + path)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("%s: %v %v", path, err, resp)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	get(b, "/helm/px/charts/web-1.0.0.tgz") // the fill
	b.Run("repository", func(b *testing.B) {
		for b.Loop() {
			get(b, "/helm/plain/charts/web-1.0.0.tgz")
		}
	})
	b.Run("proxy-hit", func(b *testing.B) {
		for b.Loop() {
			get(b, "/helm/px/charts/web-1.0.0.tgz")
		}
	})
	b.Run("index-revalidate", func(b *testing.B) {
		for b.Loop() {
			e.Clock.Add(2e9) // past the ttl: every request revalidates
			get(b, "/helm/px/index.yaml")
		}
	})
	b.Run("index-fresh", func(b *testing.B) {
		for b.Loop() {
			get(b, "/helm/px/index.yaml")
		}
	})
}
