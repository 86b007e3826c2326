package storetest

import (
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// testIndexGeneration: every change to what IndexEntries returns gives a
// token never seen before; reads and other repositories' changes leave
// it; a repository deleted and created again starts from a new one.
func testIndexGeneration(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "apps", "")
	mustRepo(t, s, "other", "")
	seen := map[string]string{}
	gen := func(step string) string {
		t.Helper()
		g, err := s.IndexGeneration(ctx, "apps")
		must(t, err)
		return g
	}
	changed := func(step string) string {
		t.Helper()
		g := gen(step)
		if g == "" {
			t.Fatalf("after %s: no index generation", step)
		}
		if prev, ok := seen[g]; ok {
			t.Fatalf("after %s: index generation %q, as after %s", step, g, prev)
		}
		seen[g] = step
		if again := gen(step); again != g {
			t.Fatalf("after %s: a second read gives %q, the first %q", step, again, g)
		}
		return g
	}

	mustPut(t, s, chart("apps", "web", "1.0.0"))
	g := changed("a first version")
	mustPut(t, s, chart("other", "web", "1.0.0"))
	if got := gen("a version of another repository"); got != g {
		t.Fatalf("another repository's upload moved the generation: %q → %q", g, got)
	}
	until := base.Add(10 * time.Minute)
	held := chart("apps", "web", "2.0.0")
	held.HeldUntil = &until
	mustPut(t, s, held)
	changed("a held version")
	must(t, s.ReleaseChartVersion(ctx, "apps", "web", "2.0.0", held.Digest, []byte("name: web\nversion: 2.0.0\n"), nil))
	changed("its release")
	v := &chartctl.Verification{Status: chartctl.VerificationUnsigned, CheckedAt: base}
	must(t, s.SetVerification(ctx, "apps", "web", "2.0.0", held.Digest, v, []byte("name: web\nversion: 2.0.0\nsigned: yes\n"), nil))
	changed("a verification that re-renders its entry")
	_, _, err := s.DeleteChartVersion(ctx, "apps", "web", "1.0.0")
	must(t, err)
	changed("a delete")

	_, err = s.DeleteRepository(ctx, "apps")
	must(t, err)
	_, err = s.IndexGeneration(ctx, "apps")
	wantCode(t, err, chartctl.ENOTFOUND)
	mustRepo(t, s, "apps", "")
	if g := gen("the repository created again"); seen[g] != "" {
		t.Fatalf("a repository created again has the generation %q it had after %s", g, seen[g])
	}
	mustPut(t, s, chart("apps", "web", "1.0.0"))
	changed("the first version of the new repository")
	_, err = s.IndexGeneration(ctx, "missing")
	wantCode(t, err, chartctl.ENOTFOUND)
}
