package server_test

import (
	"slices"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
)

// TestSearchSignedFacet: /v1/search counts hits by signed (from each
// version's verification record: verified is signed, unverified or
// unsigned is not), filters by signed=true|false, marks each result, and
// refuses another value naming the parameter.
func TestSearchSignedFacet(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "apps", "")
	for _, name := range []string{"web-signed", "web-forged", "web-plain"} {
		if r := s.Upload(t, "apps", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: name, Version: "1.0.0"}), ""); r.StatusCode != 200 {
			t.Fatalf("upload %s: %d %s", name, r.StatusCode, r.Body)
		}
	}
	ctx := t.Context()
	at := time.Now().UTC()
	for name, v := range map[string]*chartctl.Verification{
		"web-signed": {Status: chartctl.VerificationVerified, CheckedAt: at,
			Signatures: []chartctl.Signature{{Kind: chartctl.SignatureCosign, Identity: "ci@example.com", Trust: "release", VerifiedAt: &at}}},
		"web-forged": {Status: chartctl.VerificationUnverified, CheckedAt: at,
			Signatures: []chartctl.Signature{{Kind: chartctl.SignatureProvenance, Identity: "mallory", Reason: "no trusted key"}}},
	} {
		cv, err := s.Store.ChartVersion(ctx, "apps", name, "1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Store.SetVerification(ctx, "apps", name, "1.0.0", cv.Digest, v, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	var all client.SearchPage
	if r := s.Do(t, "GET", "/v1/search?q=web", s.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("search: %d %s", r.StatusCode, r.Body)
	} else {
		r.JSON(t, &all)
	}
	if all.Facets.Signed["true"] != 1 || all.Facets.Signed["false"] != 2 {
		t.Errorf("signed facet %v, want true:1 false:2", all.Facets.Signed)
	}
	for _, res := range all.Results {
		if res.Signed != (res.Name == "web-signed") {
			t.Errorf("%s: signed %v", res.Name, res.Signed)
		}
	}
	names := func(query string) []string {
		t.Helper()
		var page client.SearchPage
		r := s.Do(t, "GET", "/v1/search?"+query, s.AdminKey, nil)
		if r.StatusCode != 200 {
			t.Fatalf("%s: %d %s", query, r.StatusCode, r.Body)
		}
		r.JSON(t, &page)
		var out []string
		for _, res := range page.Results {
			out = append(out, res.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := names("q=web&signed=true"); !slices.Equal(got, []string{"web-signed"}) {
		t.Errorf("signed=true: %v", got)
	}
	if got := names("q=web&signed=false"); !slices.Equal(got, []string{"web-forged", "web-plain"}) {
		t.Errorf("signed=false: %v", got)
	}
	// signed alone is a filter: no q needed.
	if got := names("signed=1"); !slices.Equal(got, []string{"web-signed"}) {
		t.Errorf("signed=1 without q: %v", got)
	}
	if r := s.Do(t, "GET", "/v1/search?q=web&signed=maybe", s.AdminKey, nil); r.StatusCode != 400 || r.ErrorCode() != "invalid_parameter" {
		t.Errorf("signed=maybe: %d %s", r.StatusCode, r.Body)
	} else {
		var env struct{ Error client.ErrorDetail }
		r.JSON(t, &env)
		if env.Error.Parameter != "signed" {
			t.Errorf("signed=maybe names %q", env.Error.Parameter)
		}
	}
}
