package serve_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
)

// signers runs the real signing CLIs, cosign and notation, each with its
// own configuration directory and the server's credentials.
type signers struct {
	t                 *testing.T
	cosign, notation  string
	home, host, key   string
	cosignKey, notary string
}

func (s *signers) run(bin string, args ...string) string {
	s.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = s.home
	cmd.Env = append(os.Environ(), "HOME="+s.home, "XDG_CONFIG_HOME="+filepath.Join(s.home, ".config"),
		"DOCKER_CONFIG="+filepath.Join(s.home, ".docker"), "COSIGN_PASSWORD=", "COSIGN_YES=true",
		"NOTATION_USERNAME=ci", "NOTATION_PASSWORD="+s.key, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// verification is a chart version's verification record on /v1.
type verification struct {
	Status     string `json:"status"`
	Signatures []struct {
		Kind, Identity, Trust string
		VerifiedAt            *string `json:"verified_at"`
	} `json:"signatures"`
}

func versionVerification(t *testing.T, base, key, repo, name, version string) verification {
	t.Helper()
	resp, b, err := do(t, "GET", base+"/v1/repositories/"+repo+"/charts/"+name+"/"+version, key, nil, "")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("get %s %s: %v %v %s", name, version, err, resp, b)
	}
	var cv struct {
		Data struct {
			Verification verification `json:"verification"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &cv); err != nil {
		t.Fatal(err)
	}
	return cv.Data.Verification
}

// mustVerifiedBy fails unless the version is verified, its first
// signature of kind by the trust entry trust.
func mustVerifiedBy(t *testing.T, base, key, repo, name, version, kind, trust string) verification {
	t.Helper()
	v := versionVerification(t, base, key, repo, name, version)
	if v.Status != "verified" || len(v.Signatures) == 0 || v.Signatures[0].Kind != kind || v.Signatures[0].Trust != trust || v.Signatures[0].VerifiedAt == nil {
		t.Fatalf("%s %s: want verified by %s (%s), got %+v", name, version, trust, kind, v)
	}
	return v
}

var helmPushDigest = regexp.MustCompile(`Digest: (sha256:[0-9a-f]{64})`)

// TestRealSignersVerify drives the real CLIs against the built binary:
// helm push to its OCI endpoint, then cosign sign --key (an OCI 1.1
// referrer bundle, and the legacy .sig tag) and notation sign (a
// certificate from notation cert generate-test) verify the version
// against the repository's trust entries; cosign verify accepts what the
// server stored; a chart uploaded through /v1 and signed over OCI
// afterwards (its derived manifest) verifies; and a keyless bundle made
// by sigstore-go's virtual Sigstore verifies against the trusted root
// given to serve --sigstore-trusted-root.
func TestRealSignersVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	s := &signers{t: t, home: t.TempDir(),
		cosign:   testkit.Tool(t, "CHARTCTL_COSIGN", "cosign"),
		notation: testkit.Tool(t, "CHARTCTL_NOTATION", "notation")}
	h := testkit.NewHelm(t)
	ss := testkit.NewSigstore(t)
	rootFile := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(rootFile, ss.TrustedRootJSON(t), 0o644); err != nil {
		t.Fatal(err)
	}

	bin := mustBinary(t)
	data := t.TempDir()
	p := startServe(t, bin, data, "--sigstore-trusted-root", rootFile)
	s.key = adminKey(t, data)
	s.host = strings.TrimPrefix(p.url, "http://")
	if resp, b, err := do(t, "POST", p.url+"/v1/repositories", s.key, strings.NewReader(`{"name":"prod","visibility":"private"}`), "application/json"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("create repository: %v %v %s\nserver:\n%s", err, resp, b, p.stderr)
	}

	// Trust material: a cosign key pair, a Notation test certificate and
	// a keyless identity.
	s.run(s.cosign, "generate-key-pair")
	s.run(s.notation, "cert", "generate-test", "--default", "chartctl-test")
	cert, err := os.ReadFile(filepath.Join(s.home, ".config", "notation", "localkeys", "chartctl-test.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile(filepath.Join(s.home, "cosign.pub"))
	if err != nil {
		t.Fatal(err)
	}
	const issuer, identity = "https://token.actions.githubusercontent.com", "https://github.com/acme/charts/.github/workflows/release.yml@refs/heads/main"
	for _, e := range []map[string]string{
		{"kind": "cosign-key", "name": "cosign-ci", "key": string(pub)},
		{"kind": "notation", "name": "notary-ci", "key": string(cert)},
		{"kind": "cosign-keyless", "name": "gha", "issuer": issuer, "subject": `https://github\.com/acme/charts/.*`},
	} {
		body, _ := json.Marshal(e)
		if resp, b, err := do(t, "POST", p.url+"/v1/repositories/prod/trust", s.key, bytes.NewReader(body), "application/json"); err != nil || resp.StatusCode >= 300 {
			t.Fatalf("add trust %s: %v %v %s", e["name"], err, resp, b)
		}
	}

	h.Must("registry", "login", s.host, "--username", "ci", "--password", s.key, "--plain-http")
	s.run(s.cosign, "login", s.host, "-u", "ci", "-p", s.key)
	push := func(name string) string {
		t.Helper()
		pkg := h.Write(name+"-1.0.0.tgz", testkit.MakeChart(t, testkit.Chart{Name: name, Version: "1.0.0"}))
		out := h.Must("push", pkg, "oci://"+s.host+"/prod", "--plain-http")
		m := helmPushDigest.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("helm push printed no digest:\n%s", out)
		}
		if v := versionVerification(t, p.url, s.key, "prod", name, "1.0.0"); v.Status != "unsigned" {
			t.Fatalf("%s before signing: %+v", name, v)
		}
		return s.host + "/prod/" + name + "@" + m[1]
	}
	cosignSign := []string{"sign", "--key", "cosign.key", "--tlog-upload=false", "--use-signing-config=false", "--allow-http-registry", "-y"}

	// Cosign referrer.
	{
		ref := push("referred")
		s.run(s.cosign, append(cosignSign, ref)...)
		mustVerifiedBy(t, p.url, s.key, "prod", "referred", "1.0.0", "cosign", "cosign-ci")
		// cosign verifies what the server stored and serves.
		out := s.run(s.cosign, "verify", "--key", "cosign.pub", "--insecure-ignore-tlog=true", "--allow-http-registry", ref)
		if !strings.Contains(out, `"critical"`) && !strings.Contains(out, "verified") {
			t.Fatalf("cosign verify:\n%s", out)
		}
	}

	// Cosign legacy tag.
	{
		ref := push("tagged")
		s.run(s.cosign, append(cosignSign, "--new-bundle-format=false", ref)...)
		resp, b, err := do(t, "GET", p.url+"/v2/prod/tagged/tags/list", s.key, nil, "")
		if err != nil || resp.StatusCode != 200 || !strings.Contains(string(b), ".sig") {
			t.Fatalf("no .sig tag after cosign --new-bundle-format=false: %v %v %s", err, resp, b)
		}
		mustVerifiedBy(t, p.url, s.key, "prod", "tagged", "1.0.0", "cosign", "cosign-ci")
		s.run(s.cosign, "verify", "--key", "cosign.pub", "--insecure-ignore-tlog=true", "--allow-http-registry", "--new-bundle-format=false", ref)
	}

	// Notation.
	{
		ref := push("notarized")
		s.run(s.notation, "sign", "--insecure-registry", ref)
		v := mustVerifiedBy(t, p.url, s.key, "prod", "notarized", "1.0.0", "notation", "notary-ci")
		if !strings.Contains(v.Signatures[0].Identity, "CN=chartctl-test") {
			t.Fatalf("notation identity %q does not name the certificate's subject", v.Signatures[0].Identity)
		}
		// A certificate no trust entry holds signs, and verifies nothing.
		ref = push("stranger")
		s.run(s.notation, "cert", "generate-test", "stranger")
		s.run(s.notation, "sign", "--insecure-registry", "--key", "stranger", ref)
		if v := versionVerification(t, p.url, s.key, "prod", "stranger", "1.0.0"); v.Status != "unverified" || len(v.Signatures) != 1 || v.Signatures[0].Kind != "notation" || v.Signatures[0].VerifiedAt != nil {
			t.Fatalf("a stranger's notation signature: %+v", v)
		}
	}

	// V1 upload signed over OCI.
	{
		archive := testkit.MakeChart(t, testkit.Chart{Name: "uploaded", Version: "1.0.0"})
		body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive})
		if resp, b, err := do(t, "POST", p.url+"/v1/repositories/prod/charts", s.key, bytes.NewReader(body), ctype); err != nil || resp.StatusCode != 200 {
			t.Fatalf("upload: %v %v %s", err, resp, b)
		}
		// cosign resolves the tag to the derived manifest and signs it.
		s.run(s.cosign, append(cosignSign, s.host+"/prod/uploaded:1.0.0")...)
		mustVerifiedBy(t, p.url, s.key, "prod", "uploaded", "1.0.0", "cosign", "cosign-ci")
	}

	// Keyless against the trusted root.
	{
		archive := testkit.MakeChart(t, testkit.Chart{Name: "keyless", Version: "1.0.0"})
		body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive})
		if resp, b, err := do(t, "POST", p.url+"/v1/repositories/prod/charts", s.key, bytes.NewReader(body), ctype); err != nil || resp.StatusCode != 200 {
			t.Fatalf("upload: %v %v %s", err, resp, b)
		}
		manifest, mediaType := s.getManifest(p.url, "prod/keyless", "1.0.0")
		bundle := ss.SignBundle(t, identity, issuer, manifest)
		s.pushReferrer(p.url, "prod/keyless", manifest, mediaType, "application/vnd.dev.sigstore.bundle.v0.3+json", bundle)
		v := mustVerifiedBy(t, p.url, s.key, "prod", "keyless", "1.0.0", "cosign", "gha")
		if v.Signatures[0].Identity != identity {
			t.Fatalf("keyless identity %q, want the certificate's %q", v.Signatures[0].Identity, identity)
		}
	}
}

// ociDo sends an OCI API request with the admin key as Basic password.
func (s *signers) ociDo(method, url string, body []byte, header ...string) (*http.Response, []byte) {
	s.t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.SetBasicAuth("ci", s.key)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func (s *signers) getManifest(base, name, ref string) ([]byte, string) {
	s.t.Helper()
	resp, b := s.ociDo("GET", base+"/v2/"+name+"/manifests/"+ref, nil, "Accept", "application/vnd.oci.image.manifest.v1+json")
	if resp.StatusCode != 200 {
		s.t.Fatalf("get manifest %s:%s: %d %s", name, ref, resp.StatusCode, b)
	}
	return b, resp.Header.Get("Content-Type")
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (s *signers) pushBlob(base, name string, blob []byte) {
	s.t.Helper()
	resp, b := s.ociDo("POST", base+"/v2/"+name+"/blobs/uploads/", nil)
	if resp.StatusCode != 202 {
		s.t.Fatalf("start upload: %d %s", resp.StatusCode, b)
	}
	loc := resp.Header.Get("Location")
	if !strings.HasPrefix(loc, "http") {
		loc = base + loc
	}
	sep := "?"
	if strings.Contains(loc, "?") {
		sep = "&"
	}
	resp, b = s.ociDo("PUT", loc+sep+"digest="+digestOf(blob), blob, "Content-Type", "application/octet-stream")
	if resp.StatusCode != 201 {
		s.t.Fatalf("upload blob: %d %s", resp.StatusCode, b)
	}
}

// pushReferrer attaches payload as a one-layer artifact of type
// artifactType whose subject is subject, as cosign attaches a bundle.
func (s *signers) pushReferrer(base, name string, subject []byte, subjectType, artifactType string, payload []byte) {
	s.t.Helper()
	empty := []byte("{}")
	s.pushBlob(base, name, empty)
	s.pushBlob(base, name, payload)
	m, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "artifactType": artifactType,
		"config":  map[string]any{"mediaType": "application/vnd.oci.empty.v1+json", "digest": digestOf(empty), "size": len(empty)},
		"layers":  []map[string]any{{"mediaType": artifactType, "digest": digestOf(payload), "size": len(payload)}},
		"subject": map[string]any{"mediaType": subjectType, "digest": digestOf(subject), "size": len(subject)},
	})
	resp, b := s.ociDo("PUT", fmt.Sprintf("%s/v2/%s/manifests/%s", base, name, digestOf(m)), m, "Content-Type", "application/vnd.oci.image.manifest.v1+json")
	if resp.StatusCode != 201 {
		s.t.Fatalf("push referrer: %d %s", resp.StatusCode, b)
	}
}
