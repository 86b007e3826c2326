package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/admission/helmlint"
	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/registry"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// everyRule lists the rules badPolicyChart breaks under policyFixture's
// policy (require_signature: nobody verifies here, so it is unsigned).
var everyRule = []string{"max_size", "name_pattern", "allow_prerelease", "monotonic_versions", "required_fields",
	"images_pinned", "deny_files", "values_schema", "lint", "require_signature"}

type policyFixture struct {
	s        *testkit.Server
	own, mem string
}

// setupPolicy: organization acme (owner own@, member mem@) with a floor
// (lint error, deny *.pem), repository acme-charts holding web 2.0.0.
func setupPolicy(t *testing.T) *policyFixture {
	t.Helper()
	s := testkit.StartServer(t, func(s *server.Server) {
		s.Lint = helmlint.InProcess(chart.DefaultLimits())
		s.Extra = func(e *echo.Echo) {
			blobs := s.Blobs.(*blob.Store)
			reg := registry.New(s.App(), s.Store.(*bolt.DB), blobs, filepath.Join(filepath.Dir(blobs.Root()), "uploads"))
			reg.Auth, reg.Limits, reg.Uploads = s, s, s
			reg.SessionKey = []byte("policy test: upload session key")
			reg.Register(e)
		}
		// The verifier's seam (App.SignatureStatus): this stand-in finds
		// a signature verified by trust entry "release" on uploads with
		// a provenance file, and none otherwise.
		s.App().SignatureStatus = func(_ context.Context, _ *chartctl.Repository, _, _ string, _, prov []byte) (chartctl.PolicyVerification, error) {
			if prov == nil {
				return chartctl.PolicyVerification{Status: chartctl.VerificationUnsigned}, nil
			}
			return chartctl.PolicyVerification{Status: chartctl.VerificationVerified, Signatures: []chartctl.PolicySignature{{Kind: "pgp", Trust: "release"}}}, nil
		}
	})
	f := &policyFixture{s: s}
	f.own = s.MustKey(t, s.MustUser(t, "own@example.com", false), chartctl.AllScopes...)
	f.mem = s.MustKey(t, s.MustUser(t, "mem@example.com", false), chartctl.AllScopes...)
	must := func(r *testkit.Response) {
		t.Helper()
		if r.StatusCode != http.StatusOK {
			t.Fatalf("setup: %s %s: %d %s", r.Request.Method, r.Request.URL.Path, r.StatusCode, r.Body)
		}
	}
	must(s.DoJSON(t, "POST", "/v1/organizations", f.own, map[string]string{"name": "acme"}))
	must(s.DoJSON(t, "POST", "/v1/teams", f.own, map[string]string{"name": "devs", "organization": "acme"}))
	must(s.DoJSON(t, "POST", "/v1/teams/devs/members", f.own, map[string]string{"email": "mem@example.com"}))
	must(s.DoJSON(t, "POST", "/v1/repositories", f.own, map[string]string{"name": "acme-charts", "organization": "acme"}))
	must(s.Upload(t, "acme-charts", f.own, goodPolicyChart(t, "web2", "2.0.0"), ""))
	must(s.DoJSON(t, "PUT", "/v1/organizations/acme/policy", f.own, map[string]any{"lint": "error", "deny_files": []string{"*.pem"}}))
	return f
}

func goodPolicyChart(t *testing.T, name, version string) []byte {
	return testkit.Archive(t, name, map[string]string{
		"Chart.yaml":         "apiVersion: v2\nname: " + name + "\nversion: " + version + "\nicon: https://example.com/i.png\nmaintainers:\n  - name: Ada\nannotations:\n  artifacthub.io/images: |\n    - name: app\n      image: nginx@sha256:" + strings.Repeat("0", 64) + "\n",
		"values.yaml":        "replicas: 2\n",
		"values.schema.json": `{"type":"object","properties":{"replicas":{"type":"integer"}}}`,
		"templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  r: \"{{ .Values.replicas }}\"\n",
	})
}

// badPolicyChart breaks every rule of the fixture's policy at once: its
// name has a digit, it is older than the stored web2 2.0.0, and a file of
// random bytes makes it larger than max_size.
func badPolicyChart(t *testing.T) []byte {
	noise := make([]byte, 3000)
	if _, err := rand.Read(noise); err != nil {
		t.Fatal(err)
	}
	return testkit.Archive(t, "web2", map[string]string{
		"noise.bin":          hex.EncodeToString(noise),
		"Chart.yaml":         "apiVersion: v2\nname: web2\nversion: 1.0.0-rc.1\nannotations:\n  artifacthub.io/images: |\n    - name: app\n      image: nginx:1.25\n",
		"values.yaml":        "replicas: many\n",
		"values.schema.json": `{"type":"object","properties":{"replicas":{"type":"integer"}}}`,
		"certs/tls.pem":      "-----BEGIN PRIVATE KEY-----",
		"templates/x.yaml":   "{{ .Values.nope.deeper }}",
	})
}

func (f *policyFixture) tighten(t *testing.T) {
	t.Helper()
	r := f.s.DoJSON(t, "PUT", "/v1/repositories/acme-charts/policy", f.own, map[string]any{
		"require_signature": "any", "hold_window": "0s", "values_schema": true, "required_fields": []string{"maintainers"},
		"name_pattern": "^[a-z]+$", "allow_prerelease": false, "monotonic_versions": true, "images_pinned": true,
		"max_size": 2000, "lint": "error", "deny_files": []string{"*.pem", ".env"},
	})
	if r.StatusCode != http.StatusOK {
		t.Fatalf("set policy: %d %s", r.StatusCode, r.Body)
	}
}

func violationRules(vs []client.Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Rule)
	}
	return out
}

func wantEveryRule(t *testing.T, where string, got []string) {
	t.Helper()
	for _, rule := range everyRule {
		if !slices.Contains(got, rule) {
			t.Errorf("%s: violations %v lack %s", where, got, rule)
		}
	}
}

// TestPolicyFloorOnlyTightens: a repository policy looser than its
// organization's floor is refused naming each loosened rule; a left-out
// field takes the floor's value; only maintainers set it.
func TestPolicyFloorOnlyTightens(t *testing.T) {
	f := setupPolicy(t)
	s := f.s
	r := s.DoJSON(t, "PUT", "/v1/repositories/acme-charts/policy", f.own, map[string]any{"lint": "warning", "deny_files": []string{}})
	if r.StatusCode != http.StatusUnprocessableEntity || r.ErrorCode() != "policy_violation" {
		t.Fatalf("loosening: %d %s", r.StatusCode, r.Body)
	}
	var env struct{ Error client.ErrorDetail }
	r.JSON(t, &env)
	if got := violationRules(env.Error.Violations); !slices.Equal(got, []string{"lint", "deny_files"}) || !strings.Contains(env.Error.Message, "organization \"acme\"") {
		t.Fatalf("loosening violations %v: %s", got, env.Error.Message)
	}
	// Members read the policy but may not set it (maintain role).
	if r := s.DoJSON(t, "PUT", "/v1/repositories/acme-charts/policy", f.mem, map[string]any{"max_size": 100}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("member sets policy: %d %s", r.StatusCode, r.Body)
	}
	if r := s.DoJSON(t, "PUT", "/v1/organizations/acme/policy", f.mem, map[string]any{"lint": "off"}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("member sets the floor: %d %s", r.StatusCode, r.Body)
	}
	r = s.DoJSON(t, "PUT", "/v1/repositories/acme-charts/policy", f.own, map[string]any{"max_size": 4096})
	if r.StatusCode != http.StatusOK {
		t.Fatalf("tightening: %d %s", r.StatusCode, r.Body)
	}
	var got struct{ Data client.RepositoryPolicy }
	s.Do(t, "GET", "/v1/repositories/acme-charts/policy", f.mem, nil).JSON(t, &got)
	if got.Data.Lint != "error" || got.Data.MaxSize != 4096 || !slices.Equal(got.Data.DenyFiles, []string{"*.pem"}) || !got.Data.AllowPrerelease {
		t.Fatalf("policy after tightening: %+v", got.Data)
	}
	// The floor tightened later still applies: effective takes it.
	if r := s.DoJSON(t, "PUT", "/v1/organizations/acme/policy", f.own, map[string]any{"lint": "error", "deny_files": []string{"*.pem"}, "allow_prerelease": false}); r.StatusCode != http.StatusOK {
		t.Fatalf("floor: %d %s", r.StatusCode, r.Body)
	}
	s.Do(t, "GET", "/v1/repositories/acme-charts/policy", f.mem, nil).JSON(t, &got)
	if !got.Data.AllowPrerelease || got.Data.Effective.AllowPrerelease {
		t.Fatalf("effective policy after the floor tightened: %+v", got.Data)
	}
	// Each change is audited as a success (setup's floor, the
	// repository's, the floor again); the refused ones as refused.
	entries, _, err := s.Store.AuditLog(t.Context(), chartctl.AuditFilter{Action: "policy.update", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]int{}
	for _, e := range entries {
		outcomes[string(e.Outcome)]++
	}
	if outcomes["success"] != 3 || len(entries) == 3 {
		t.Fatalf("policy.update audit outcomes = %v, want 3 successes and the refusals", outcomes)
	}
}

// TestPolicyRefusesOnEveryProtocol: one chart breaking every rule is
// refused naming every rule on /v1 (422 policy_violation), the
// ChartMuseum API (422, error string and violations) and OCI (DENIED),
// and nothing is stored; a dry run reports findings and stores nothing.
func TestPolicyRefusesOnEveryProtocol(t *testing.T) {
	f := setupPolicy(t)
	s := f.s
	f.tighten(t)
	bad := badPolicyChart(t)

	r := s.Upload(t, "acme-charts", f.own, bad, "")
	var env struct{ Error client.ErrorDetail }
	r.JSON(t, &env)
	if r.StatusCode != http.StatusUnprocessableEntity || env.Error.Code != "policy_violation" {
		t.Fatalf("/v1: %d %s", r.StatusCode, r.Body)
	}
	wantEveryRule(t, "/v1", violationRules(env.Error.Violations))

	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": bad})
	r = s.Do(t, "POST", "/helm/api/acme-charts/charts", f.own, bytes.NewReader(body), "Content-Type", ctype)
	var cm struct {
		Error      string             `json:"error"`
		Violations []client.Violation `json:"violations"`
	}
	r.JSON(t, &cm)
	if r.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("ChartMuseum: %d %s", r.StatusCode, r.Body)
	}
	wantEveryRule(t, "ChartMuseum violations", violationRules(cm.Violations))
	for _, rule := range everyRule {
		if !strings.Contains(cm.Error, rule+":") {
			t.Errorf("ChartMuseum error %q does not name %s", cm.Error, rule)
		}
	}

	oc, err := testkit.NewOCIChart("web2", "1.0.0-rc.1", bad)
	if err != nil {
		t.Fatal(err)
	}
	err = testkit.PushLikeHelm(http.DefaultClient, s.URL, "acme-charts", "own@example.com", f.own, oc)
	if err == nil || !strings.Contains(err.Error(), "DENIED") {
		t.Fatalf("OCI push: %v", err)
	}
	for _, rule := range everyRule {
		if !strings.Contains(err.Error(), rule+":") {
			t.Errorf("OCI error does not name %s: %v", rule, err)
		}
	}

	// A compliant chart is checked without storing, then stored.
	good := goodPolicyChart(t, "web", "2.1.0")
	body, ctype = testkit.Multipart(t, map[string][]byte{"chart": good, "prov": []byte("signed")})
	r = s.Do(t, "POST", "/v1/repositories/acme-charts/charts?dry_run=true", f.own, bytes.NewReader(body), "Content-Type", ctype)
	var chk struct{ Data client.ChartCheck }
	r.JSON(t, &chk)
	if r.StatusCode != http.StatusOK || !chk.Data.DryRun || chk.Data.Version != "2.1.0" {
		t.Fatalf("dry run: %d %s", r.StatusCode, r.Body)
	}
	r = s.Upload(t, "acme-charts", f.own, bad, "?dry_run=true")
	if r.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("dry run of a bad chart: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Do(t, "GET", "/v1/repositories/acme-charts/charts/web/2.1.0", f.own, nil); r.StatusCode != http.StatusNotFound {
		t.Fatalf("a dry run stored the chart: %d %s", r.StatusCode, r.Body)
	}
	vs, err := s.Store.ChartVersions(t.Context(), "acme-charts", chartctl.ChartFilter{})
	if err != nil || len(vs) != 1 {
		t.Fatalf("stored versions after refusals: %d, %v", len(vs), err)
	}
	// Signed, it is stored; unsigned, require_signature alone refuses it.
	if r := s.Upload(t, "acme-charts", f.own, goodPolicyChart(t, "web", "2.2.0"), ""); r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), `"rule":"require_signature"`) {
		t.Fatalf("unsigned upload: %d %s", r.StatusCode, r.Body)
	}
	r = s.Do(t, "POST", "/v1/repositories/acme-charts/charts", f.own, bytes.NewReader(body), "Content-Type", ctype)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("signed upload: %d %s", r.StatusCode, r.Body)
	}
}

// TestPolicyRefusesRealHelmPush: `helm push oci://` of a chart breaking
// the policy fails with every rule named, and pushes nothing.
func TestPolicyRefusesRealHelmPush(t *testing.T) {
	helm := testkit.HelmBinary(t)
	f := setupPolicy(t)
	s := f.s
	f.tighten(t)
	dir := t.TempDir()
	pkg := filepath.Join(dir, "web2-1.0.0-rc.1.tgz")
	if err := os.WriteFile(pkg, badPolicyChart(t), 0o644); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(s.URL)
	home := t.TempDir()
	run := func(args ...string) (string, error) {
		cmd := exec.Command(helm, args...)
		cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
			"HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("registry", "login", u.Host, "--username", "own", "--password", f.own, "--plain-http"); err != nil {
		t.Fatalf("helm registry login: %v\n%s", err, out)
	}
	out, err := run("push", pkg, "oci://"+u.Host+"/acme-charts", "--plain-http")
	if err == nil {
		t.Fatalf("helm push of a bad chart succeeded:\n%s", out)
	}
	for _, rule := range everyRule {
		if !strings.Contains(out, rule) {
			t.Errorf("helm push output does not name %s:\n%s", rule, out)
		}
	}
	vs, err := s.Store.ChartVersions(t.Context(), "acme-charts", chartctl.ChartFilter{})
	if err != nil || len(vs) != 1 {
		t.Fatalf("stored versions after the refused push: %d, %v", len(vs), err)
	}
}
