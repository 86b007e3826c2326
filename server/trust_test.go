package server_test

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/testkit"
)

func uploadSigned(t *testing.T, ts *testkit.Server, repo string, archive, prov []byte) {
	t.Helper()
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive, "prov": prov})
	resp := ts.Do(t, http.MethodPost, "/v1/repositories/"+repo+"/charts", ts.AdminKey, bytes.NewReader(body), "Content-Type", ctype)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %d %s", resp.StatusCode, resp.Body)
	}
}

func chartVerification(t *testing.T, ts *testkit.Server, repo, name, version string) *client.Verification {
	t.Helper()
	resp := ts.Do(t, http.MethodGet, "/v1/repositories/"+repo+"/charts/"+name+"/"+version, ts.AdminKey, nil)
	var out struct {
		Data client.Chart `json:"data"`
	}
	resp.JSON(t, &out)
	if out.Data.Verification == nil {
		t.Fatalf("GET %s/%s: no verification in %s", name, version, resp.Body)
	}
	return out.Data.Verification
}

// TestProvenanceVerifiedAgainstRepositoryKeyring: `helm package --sign`
// (real gpg and helm), then an upload with the .prov: verified against
// the repository's pgp keyring, the signer named in /v1 and index.yaml; a
// chart signed by an unknown key and a tampered archive are unverified;
// removing the keyring re-verifies stored versions in the background.
func TestProvenanceVerifiedAgainstRepositoryKeyring(t *testing.T) {
	helm := testkit.HelmBinary(t)
	signer := testkit.MustGPGSigner(t, "Chart Signer <signer@example.com>")
	stranger := testkit.MustGPGSigner(t, "Someone Else <else@example.com>")
	ts := testkit.StartServer(t)
	ts.MustYAMLRepo(t, "prod", "")

	pub, err := os.ReadFile(signer.Pubring)
	if err != nil {
		t.Fatal(err)
	}
	resp := ts.DoJSON(t, http.MethodPost, "/v1/repositories/prod/trust", ts.AdminKey,
		client.TrustRequest{Name: "release", Kind: "pgp", KeyBase64: base64.StdEncoding.EncodeToString(pub)})
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		t.Fatalf("add trust: %d %s", resp.StatusCode, resp.Body)
	}
	// A keyring that does not parse is refused when added.
	if r := ts.DoJSON(t, http.MethodPost, "/v1/repositories/prod/trust", ts.AdminKey,
		client.TrustRequest{Name: "junk", Kind: "pgp", Key: "not a key"}); r.StatusCode != http.StatusBadRequest {
		t.Fatalf("junk keyring: %d %s", r.StatusCode, r.Body)
	}
	// Reserved names are refused.
	if r := ts.DoJSON(t, http.MethodPost, "/v1/repositories/prod/trust", ts.AdminKey,
		client.TrustRequest{Name: "any", Kind: "pgp", KeyBase64: base64.StdEncoding.EncodeToString(pub)}); r.StatusCode != http.StatusBadRequest {
		t.Fatalf("reserved name: %d %s", r.StatusCode, r.Body)
	}

	archive, prov := testkit.MustSignedChart(t, helm, "web", "1.0.0", signer)
	uploadSigned(t, ts, "prod", archive, prov)
	v := chartVerification(t, ts, "prod", "web", "1.0.0")
	if v.Status != "verified" || len(v.Signatures) != 1 || v.Signatures[0].Kind != "pgp" ||
		v.Signatures[0].Identity != signer.Name || v.Signatures[0].Trust != "release" || v.Signatures[0].VerifiedAt == nil {
		t.Fatalf("signed by the repository's key: %+v", v)
	}
	index := ts.Do(t, http.MethodGet, "/helm/prod/index.yaml", ts.AdminKey, nil)
	if !strings.Contains(string(index.Body), "chartctl.io/signed-by: Chart Signer <signer@example.com>") {
		t.Fatalf("index.yaml does not name the signer:\n%s", index.Body)
	}

	// Signed by a key the repository does not trust.
	archive2, prov2 := testkit.MustSignedChart(t, helm, "web", "1.1.0", stranger)
	uploadSigned(t, ts, "prod", archive2, prov2)
	if v := chartVerification(t, ts, "prod", "web", "1.1.0"); v.Status != "unverified" || v.Signatures[0].VerifiedAt != nil {
		t.Fatalf("signed by an unknown key: %+v", v)
	}

	// A tampered archive: the provenance file of another archive.
	_, prov3 := testkit.MustSignedChart(t, helm, "api", "1.0.0", signer)
	tampered := testkit.MakeChart(t, testkit.Chart{Name: "api", Version: "1.0.0"})
	uploadSigned(t, ts, "prod", tampered, prov3)
	if v := chartVerification(t, ts, "prod", "api", "1.0.0"); v.Status != "unverified" {
		t.Fatalf("tampered archive: %+v", v)
	}
	// An unsigned upload is unsigned.
	if r := ts.Upload(t, "prod", ts.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "plain", Version: "1.0.0"}), ""); r.StatusCode >= 300 {
		t.Fatalf("upload unsigned: %d %s", r.StatusCode, r.Body)
	}
	if v := chartVerification(t, ts, "prod", "plain", "1.0.0"); v.Status != "unsigned" || len(v.Signatures) != 0 {
		t.Fatalf("unsigned chart: %+v", v)
	}

	// The trust change re-verifies stored versions: run the background
	// job to its end here (it runs under the same lease).
	if r := ts.Do(t, http.MethodDelete, "/v1/repositories/prod/trust/release", ts.AdminKey, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("remove trust: %d %s", r.StatusCode, r.Body)
	}
	waitReverified(t, ts)
	if v := chartVerification(t, ts, "prod", "web", "1.0.0"); v.Status != "unverified" {
		t.Fatalf("after the keyring was removed: %+v", v)
	}
	index = ts.Do(t, http.MethodGet, "/helm/prod/index.yaml", ts.AdminKey, nil)
	if strings.Contains(string(index.Body), "chartctl.io/signed-by") {
		t.Fatalf("index.yaml still names a signer:\n%s", index.Body)
	}
	// Trusting the stranger's key at the organization level is not
	// possible for a personal repository; trusting it on the repository
	// verifies 1.1.0.
	strangerPub, _ := os.ReadFile(stranger.Pubring)
	if r := ts.DoJSON(t, http.MethodPost, "/v1/repositories/prod/trust", ts.AdminKey,
		client.TrustRequest{Name: "else", Kind: "pgp", KeyBase64: base64.StdEncoding.EncodeToString(strangerPub)}); r.StatusCode >= 300 {
		t.Fatalf("add trust: %d %s", r.StatusCode, r.Body)
	}
	waitReverified(t, ts)
	if v := chartVerification(t, ts, "prod", "web", "1.1.0"); v.Status != "verified" || v.Signatures[0].Trust != "else" {
		t.Fatalf("after trusting the second key: %+v", v)
	}
}

// waitReverified waits for the background re-verification to finish
// (the condition, not a duration: the test's own deadline bounds it).
func waitReverified(t *testing.T, ts *testkit.Server) {
	t.Helper()
	for {
		running, _, _ := ts.App().ReverifyProgress()
		if !running {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatal("re-verification did not finish")
		default:
			runtimeGosched()
		}
	}
}

func runtimeGosched() { runtime.Gosched() }

// TestRequireSignatureVerifiesTheUploadsProvenance: under a policy that
// requires a signature, the provenance file that comes with an upload is
// verified by the real verifier (real gpg and helm) against the
// repository's trust entries before anything is stored: signed by the
// trusted key → stored; by another key, or unsigned → 422 naming
// require_signature, and nothing stored. A policy naming the trust entry
// takes only that entry's signatures.
func TestRequireSignatureVerifiesTheUploadsProvenance(t *testing.T) {
	helm := testkit.HelmBinary(t)
	signer := testkit.MustGPGSigner(t, "Chart Signer <signer@example.com>")
	stranger := testkit.MustGPGSigner(t, "Someone Else <else@example.com>")
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "prod", "")
	pub, err := os.ReadFile(signer.Pubring)
	if err != nil {
		t.Fatal(err)
	}
	if r := ts.DoJSON(t, http.MethodPost, "/v1/repositories/prod/trust", ts.AdminKey,
		client.TrustRequest{Name: "release", Kind: "pgp", KeyBase64: base64.StdEncoding.EncodeToString(pub)}); r.StatusCode >= 300 {
		t.Fatalf("add trust: %d %s", r.StatusCode, r.Body)
	}
	for _, require := range []string{"any", "release"} {
		if r := ts.DoJSON(t, http.MethodPut, "/v1/repositories/prod/policy", ts.AdminKey,
			map[string]any{"require_signature": require, "hold_window": "0s"}); r.StatusCode != http.StatusOK {
			t.Fatalf("set policy %s: %d %s", require, r.StatusCode, r.Body)
		}
		v := map[string]string{"any": "1.0.0", "release": "2.0.0"}[require]
		archive, prov := testkit.MustSignedChart(t, helm, "web", v, signer)
		uploadSigned(t, ts, "prod", archive, prov)
		if got := chartVerification(t, ts, "prod", "web", v); got.Status != "verified" {
			t.Fatalf("require %s, signed by the trusted key: %+v", require, got)
		}
		a2, p2 := testkit.MustSignedChart(t, helm, "api", v, stranger)
		for what, parts := range map[string]map[string][]byte{
			"signed by another key": {"chart": a2, "prov": p2},
			"unsigned":              {"chart": testkit.MakeChart(t, testkit.Chart{Name: "api", Version: v})},
		} {
			body, ctype := testkit.Multipart(t, parts)
			r := ts.Do(t, http.MethodPost, "/v1/repositories/prod/charts", ts.AdminKey, bytes.NewReader(body), "Content-Type", ctype)
			if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), `"rule":"require_signature"`) {
				t.Fatalf("require %s, %s: %d %s", require, what, r.StatusCode, r.Body)
			}
		}
		if r := ts.Do(t, http.MethodGet, "/v1/repositories/prod/charts/api/versions/"+v, ts.AdminKey, nil); r.StatusCode != http.StatusNotFound {
			t.Fatalf("require %s: a refused chart was stored: %d %s", require, r.StatusCode, r.Body)
		}
	}
}
