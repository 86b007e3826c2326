package admission_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/admission"
	"github.com/chartctl/chartctl/internal/admission/helmlint"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// mustArchive returns a .tgz of chart directory name holding files.
func mustArchive(tb testing.TB, name string, files map[string]string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for p, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name + "/" + p, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			tb.Fatal(err)
		}
		if _, err := io.WriteString(tw, content); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func mustInput(tb testing.TB, archive []byte) admission.Input {
	tb.Helper()
	ch, err := chart.Read(bytes.NewReader(archive), chart.DefaultLimits())
	if err != nil {
		tb.Fatal(err)
	}
	return admission.Input{Archive: archive, Chart: ch, Limits: chart.DefaultLimits(), Lint: helmlint.InProcess(chart.DefaultLimits())}
}

func rules(vs []chartctl.Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Rule)
	}
	return out
}

const badChartYAML = "apiVersion: v2\nname: Bad_Name\nversion: 1.0.0-rc.1\nannotations:\n  artifacthub.io/images: |\n    - name: app\n      image: nginx:1.25\n"

func TestEvaluateNamesEveryBrokenRule(t *testing.T) {
	arc := mustArchive(t, "Bad_Name", map[string]string{
		"Chart.yaml":         badChartYAML,
		"values.yaml":        "replicas: many\n",
		"values.schema.json": `{"type":"object","properties":{"replicas":{"type":"integer"}}}`,
		"certs/tls.pem":      "secret",
		"templates/x.yaml":   "{{ .Values.nope.deeper }}",
	})
	in := mustInput(t, arc)
	in.Stored = []string{"2.0.0"}
	p := chartctl.DefaultPolicy()
	p.Lint = chartctl.LintError
	p.ValuesSchema = true
	p.RequiredFields = []string{"maintainers", "sources"}
	p.NamePattern = "^[a-z-]+$"
	p.AllowPrerelease = false
	p.MonotonicVersions = true
	p.ImagesPinned = true
	p.MaxSize = 10
	p.DenyFiles = []string{"*.pem"}
	p.RequireSignature = chartctl.SignatureAny
	res, err := admission.Evaluate(context.Background(), p, in)
	if err != nil {
		t.Fatal(err)
	}
	got := rules(res.Violations)
	for _, want := range []string{"max_size", "name_pattern", "allow_prerelease", "monotonic_versions", "required_fields", "images_pinned", "deny_files", "values_schema", "lint"} {
		if !slices.Contains(got, want) {
			t.Errorf("violations %v lack %s", got, want)
		}
	}
	if res.Unsigned == nil || res.Unsigned.Rule != "require_signature" {
		t.Errorf("Unsigned = %+v", res.Unsigned)
	}
	err = res.Refusal("prod", false)
	if chartctl.ErrorCode(err) != chartctl.EPOLICY || !strings.Contains(err.Error(), "require_signature") || !strings.Contains(chartctl.ErrorMessage(err), "deny_files") {
		t.Errorf("Refusal = %v (%s)", err, chartctl.ErrorCode(err))
	}
}

func TestEvaluateCompliantChart(t *testing.T) {
	arc := mustArchive(t, "good", map[string]string{
		"Chart.yaml":         "apiVersion: v2\nname: good\nversion: 1.1.0\nicon: https://example.com/i.png\nmaintainers:\n  - name: Ada\nsources:\n  - https://example.com\nannotations:\n  artifacthub.io/images: |\n    - name: app\n      image: nginx@sha256:0000000000000000000000000000000000000000000000000000000000000000\n",
		"values.yaml":        "replicas: 2\n",
		"values.schema.json": `{"type":"object","properties":{"replicas":{"type":"integer"}}}`,
		"templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  r: \"{{ .Values.replicas }}\"\n",
		"README.pem.txt":     "not a pem",
	})
	in := mustInput(t, arc)
	in.Stored = []string{"1.0.0", "0.9.0"}
	in.Verification = chartctl.PolicyVerification{Status: chartctl.VerificationVerified, Signatures: []chartctl.PolicySignature{{Kind: "pgp", Trust: "release-key"}}}
	p := chartctl.DefaultPolicy()
	p.Lint = chartctl.LintError
	p.ValuesSchema = true
	p.RequiredFields = []string{"maintainers", "sources"}
	p.NamePattern = "^[a-z-]+$"
	p.AllowPrerelease = false
	p.MonotonicVersions = true
	p.ImagesPinned = true
	p.DenyFiles = []string{"*.pem", "secrets/*"}
	p.RequireSignature = "release-key"
	res, err := admission.Evaluate(context.Background(), p, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) != 0 || res.Unsigned != nil {
		t.Fatalf("violations %+v unsigned %+v", res.Violations, res.Unsigned)
	}
}

func TestMatchDenied(t *testing.T) {
	for _, c := range []struct {
		glob, path string
		want       bool
	}{
		{"*.pem", "tls.pem", true}, {"*.pem", "a/b/tls.pem", true}, {".env", "sub/.env", true},
		{"secrets/*", "secrets/x", true}, {"secrets/*", "a/secrets/x", false}, {"*.pem", "pem", false},
	} {
		if got := admission.MatchDenied(c.glob, c.path); got != c.want {
			t.Errorf("MatchDenied(%q, %q) = %v", c.glob, c.path, got)
		}
	}
}

func TestFloorTightenOnly(t *testing.T) {
	floor := chartctl.DefaultPolicy()
	floor.Lint = chartctl.LintError
	floor.RequireSignature = chartctl.SignatureAny
	floor.MaxSize = 1 << 20
	floor.DenyFiles = []string{"*.pem"}
	floor.AllowPrerelease = false

	loose := chartctl.DefaultPolicy()
	loose.Lint = chartctl.LintWarning
	loose.MaxSize = 2 << 20
	got := rules(admission.Looser(floor, loose))
	want := []string{"require_signature", "lint", "allow_prerelease", "max_size", "deny_files"}
	if !slices.Equal(got, want) {
		t.Errorf("Looser = %v, want %v", got, want)
	}

	tight := floor
	tight.RequireSignature = "release-key"
	tight.MaxSize = 1 << 10
	tight.DenyFiles = []string{".env", "*.pem"}
	tight.MonotonicVersions = true
	if vs := admission.Looser(floor, tight); len(vs) != 0 {
		t.Errorf("Looser(tighter) = %+v", vs)
	}

	// A floor tightened after the repository's policy still applies.
	e := admission.Effective(floor, chartctl.DefaultPolicy())
	if e.Lint != chartctl.LintError || e.RequireSignature != "any" || e.MaxSize != 1<<20 || e.AllowPrerelease || !slices.Equal(e.DenyFiles, []string{"*.pem"}) {
		t.Errorf("Effective = %+v", e)
	}
	if e := admission.Effective(floor, tight); e.RequireSignature != "release-key" || e.MaxSize != 1<<10 {
		t.Errorf("Effective(tight) = %+v", e)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		p     chartctl.Policy
		param string
	}{
		{chartctl.Policy{Lint: "strict"}, "lint"},
		{chartctl.Policy{NamePattern: "("}, "name_pattern"},
		{chartctl.Policy{RequiredFields: []string{"owner"}}, "required_fields"},
		{chartctl.Policy{DenyFiles: []string{"[a"}}, "deny_files"},
		{chartctl.Policy{MaxSize: -1}, "max_size"},
	} {
		err := admission.Validate(&c.p)
		if chartctl.ErrorParameter(err) != c.param {
			t.Errorf("Validate(%+v) = %v, want parameter %s", c.p, err, c.param)
		}
	}
}
