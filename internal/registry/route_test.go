package registry

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
)

// specRoutes are the routes of the distribution specification as regular
// expressions, tried in order: what matchPath must agree with.
var specRoutes = []struct {
	re *regexp.Regexp
	rt *route
}{
	{regexp.MustCompile(`^$`), routeBase},
	{regexp.MustCompile(`^token$`), routeToken},
	{regexp.MustCompile(`^_catalog$`), routeCatalog},
	{regexp.MustCompile(`^(.+)/manifests/([^/]+)$`), routeManifest},
	{regexp.MustCompile(`^(.+)/blobs/uploads/?$`), routeStartUpload},
	{regexp.MustCompile(`^(.+)/blobs/uploads/([^/]+)$`), routeUpload},
	{regexp.MustCompile(`^(.+)/blobs/([^/]+)$`), routeBlob},
	{regexp.MustCompile(`^(.+)/tags/list$`), routeTags},
	{regexp.MustCompile(`^(.+)/referrers/([^/]+)$`), routeReferrers},
}

func specMatch(path string) (*route, pathMatch) {
	for _, s := range specRoutes {
		if m := s.re.FindStringSubmatch(path); m != nil {
			var pm pathMatch
			copy(pm[:], m)
			return s.rt, pm
		}
	}
	return nil, pathMatch{}
}

func checkMatch(t *testing.T, path string) {
	t.Helper()
	wantRT, wantM := specMatch(path)
	gotRT, gotM := matchPath(path)
	if gotRT != wantRT {
		t.Errorf("%q: route %v, want %v", path, routeName(gotRT), routeName(wantRT))
		return
	}
	if gotRT != nil && gotRT != routeBase && gotRT != routeToken && gotRT != routeCatalog && gotM != wantM {
		t.Errorf("%q: match %q, want %q", path, gotM, wantM)
	}
}

func routeName(rt *route) string {
	for name, r := range map[string]*route{"base": routeBase, "token": routeToken, "catalog": routeCatalog, "manifest": routeManifest,
		"start-upload": routeStartUpload, "upload": routeUpload, "blob": routeBlob, "tags": routeTags, "referrers": routeReferrers} {
		if r == rt {
			return name
		}
	}
	return "none"
}

func TestMatchPathAgreesWithTheSpecificationRoutes(t *testing.T) {
	for _, p := range []string{
		"", "token", "_catalog", "tokens", "/", "a", "a/", "a/b",
		"repo/chart/manifests/1.0.0", "repo/manifests/sha256:abc", "manifests/x", "/manifests/x", "repo/manifests/", "repo/manifests/a/b",
		"repo/blobs/uploads", "repo/blobs/uploads/", "repo/blobs/uploads//", "repo/blobs/uploads/0123", "blobs/uploads", "blobs/uploads/x",
		"repo/blobs/sha256:abc", "repo/blobs/", "a/blobs/uploads/blobs/sha256:1", "a/manifests/x/blobs/uploads/id",
		"a/uploads/x", "a/b/uploads/x", "/blobs/uploads/x", "repo/tags/list", "repo/tags/lists", "tags/list", "repo/tags/list/",
		"repo/referrers/sha256:abc", "a\nb/manifests/x", "a/manifests/x\ny", "a/blobs/uploads\n/x", "//a/blobs/x",
		"a/blobs/blobs/uploads", "a/blobs/uploads/uploads", "a/tags/list/tags/list", "x/_catalog", "token/manifests/1",
	} {
		checkMatch(t, p)
	}
	// Paths made of the words that matter, in every order.
	words := []string{"a", "blobs", "uploads", "manifests", "tags", "list", "referrers", "", "\n", "token", "_catalog", "sha256:0"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		n := 1 + rng.IntN(6)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = words[rng.IntN(len(words))]
		}
		checkMatch(t, strings.Join(parts, "/"))
	}
}

func BenchmarkMatchPath(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		matchPath("bench/nginx-operator/blobs/sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	}
}

// The shortcut of parseDigest accepts exactly the digests go-digest
// parses with a supported algorithm, and the rest go the long way.
func TestWellFormedDigestAgreesWithGoDigest(t *testing.T) {
	hex64 := strings.Repeat("0123456789abcdef", 4)
	cases := []string{
		"sha256:" + hex64, "sha512:" + hex64 + hex64, "sha256:" + hex64[:63], "sha256:" + hex64 + "0", "sha256:" + strings.ToUpper(hex64),
		"sha384:" + hex64 + hex64[:32], "sha256:", "sha256", "", ":" + hex64, "SHA256:" + hex64, "sha256:" + hex64[:63] + "g", "sha512:" + hex64,
		"sha256+b64u:LCa0a2j_xo_5m0U8HTBBNBNCLXBkg7-g-YpeiGJm564", "md5:d41d8cd98f00b204e9800998ecf8427e",
	}
	alphabet := "0af9g:sha256"
	rng := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		b := []byte("sha256:" + hex64)
		for range 1 + rng.IntN(2) {
			b[rng.IntN(len(b))] = alphabet[rng.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		_, slowErr := parseDigestSlow(s)
		if wellFormedDigest(s) && slowErr != nil {
			t.Errorf("%q: the shortcut accepts what go-digest refuses: %v", s, slowErr)
		}
		if !wellFormedDigest(s) && slowErr == nil {
			t.Errorf("%q: go-digest accepts what the shortcut refuses", s)
		}
	}
}

// parseDigestSlow is parseDigest without its shortcut.
func parseDigestSlow(s string) (string, error) {
	d, err := digest.Parse(s)
	if err != nil {
		return "", err
	}
	if d.Algorithm() != digest.SHA256 && d.Algorithm() != digest.SHA512 {
		return "", errDigestInvalid("unsupported")
	}
	return d.String(), nil
}
