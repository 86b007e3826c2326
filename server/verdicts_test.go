package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/testkit"
)

// chartPolicy returns the policy verdict of one version as /v1 shows it.
func chartPolicy(t *testing.T, ts *testkit.Server, tok, repo, name, version string) *client.VersionPolicy {
	t.Helper()
	resp := ts.Do(t, http.MethodGet, "/v1/repositories/"+repo+"/charts/"+name+"/"+version, tok, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/%s: %d %s", name, version, resp.StatusCode, resp.Body)
	}
	var out struct {
		Data client.Chart `json:"data"`
	}
	resp.JSON(t, &out)
	if out.Data.Policy == nil {
		t.Fatalf("GET %s/%s: no policy in %s", name, version, resp.Body)
	}
	return out.Data.Policy
}

// waitRechecked waits for the background policy re-check to finish (the
// condition, not a duration: the test's own deadline bounds it).
func waitRechecked(t *testing.T, ts *testkit.Server) {
	t.Helper()
	for {
		running, _, _, _ := ts.App().RecheckProgress()
		if !running {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatal("the policy re-check did not finish")
		default:
			runtimeGosched()
		}
	}
}

func findingRules(fs []client.Finding, severity string) []string {
	var out []string
	for _, f := range fs {
		if f.Severity == severity {
			out = append(out, f.Rule)
		}
	}
	return out
}

// TestVersionPolicyKeepsFindingsAndMarksNoncompliance: lint warnings are
// kept on the version at push; a repository policy change and an
// organization floor change mark the stored versions that no longer
// comply (naming the rules), a loosening clears the mark, and nothing is
// ever deleted: noncompliant versions stay listed, in index.yaml and
// pullable.
func TestVersionPolicyKeepsFindingsAndMarksNoncompliance(t *testing.T) {
	f := setupPolicy(t)
	ts := f.s
	// The floor (lint error, deny *.pem) came after web2 2.0.0: its
	// sweep checked it, and it complies.
	waitRechecked(t, ts)
	if p := chartPolicy(t, ts, f.mem, "acme-charts", "web2", "2.0.0"); p.Status != "ok" || len(p.Findings) != 0 || p.CheckedAt == nil {
		t.Fatalf("web2 2.0.0 after the floor: %+v", p)
	}

	// A chart without templates: Helm's lint warns, the error level
	// refuses only errors, and the warning is kept on the version.
	notpl := testkit.Archive(t, "notpl", map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: notpl\nversion: 1.0.0\nmaintainers:\n  - name: Ada\n",
		"values.yaml": "a: 1\n",
	})
	if r := ts.Upload(t, "acme-charts", f.own, notpl, ""); r.StatusCode != http.StatusOK {
		t.Fatalf("upload notpl: %d %s", r.StatusCode, r.Body)
	}
	p := chartPolicy(t, ts, f.mem, "acme-charts", "notpl", "1.0.0")
	if p.Status != "ok" || strings.Join(findingRules(p.Findings, "warning"), ",") != "lint" || len(findingRules(p.Findings, "error")) != 0 ||
		!strings.Contains(p.Findings[0].Message, "templates/") || p.CheckedAt == nil {
		t.Fatalf("notpl's verdict at push: %+v", p)
	}
	// A chart with no maintainers, pushed while nothing requires them.
	plain := testkit.Archive(t, "plain", map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: plain\nversion: 1.0.0\n",
		"values.yaml":       "a: 1\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n",
	})
	if r := ts.Upload(t, "acme-charts", f.own, plain, ""); r.StatusCode != http.StatusOK {
		t.Fatalf("upload plain: %d %s", r.StatusCode, r.Body)
	}
	if p := chartPolicy(t, ts, f.mem, "acme-charts", "plain", "1.0.0"); p.Status != "ok" || len(p.Findings) != 0 {
		t.Fatalf("plain at push: %+v", p)
	}

	// The repository now requires maintainers: plain no longer complies.
	if r := ts.DoJSON(t, http.MethodPut, "/v1/repositories/acme-charts/policy", f.own, map[string]any{"required_fields": []string{"maintainers"}}); r.StatusCode != http.StatusOK {
		t.Fatalf("set policy: %d %s", r.StatusCode, r.Body)
	}
	waitRechecked(t, ts)
	p = chartPolicy(t, ts, f.mem, "acme-charts", "plain", "1.0.0")
	if p.Status != "noncompliant" || strings.Join(findingRules(p.Findings, "error"), ",") != "required_fields" ||
		!strings.Contains(p.Findings[0].Message, "maintainers") {
		t.Fatalf("plain after maintainers became required: %+v", p)
	}
	if p := chartPolicy(t, ts, f.mem, "acme-charts", "web2", "2.0.0"); p.Status != "ok" {
		t.Fatalf("web2 has maintainers: %+v", p)
	}
	// notpl keeps its lint warning under the re-check, and complies.
	if p := chartPolicy(t, ts, f.mem, "acme-charts", "notpl", "1.0.0"); p.Status != "ok" || strings.Join(findingRules(p.Findings, "warning"), ",") != "lint" {
		t.Fatalf("notpl after the policy change: %+v", p)
	}
	// Marked, never deleted: listed, in index.yaml, pullable.
	list := ts.Do(t, http.MethodGet, "/v1/repositories/acme-charts/charts?limit=100", f.mem, nil)
	if list.StatusCode != http.StatusOK || !strings.Contains(string(list.Body), `"noncompliant"`) || !strings.Contains(string(list.Body), `"name":"plain"`) {
		t.Fatalf("listing after the policy change: %d %s", list.StatusCode, list.Body)
	}
	if idx := ts.Do(t, http.MethodGet, "/helm/acme-charts/index.yaml", f.mem, nil); !strings.Contains(string(idx.Body), "plain-1.0.0.tgz") {
		t.Fatalf("index.yaml lost the noncompliant version:\n%s", idx.Body)
	}
	if pull := ts.Do(t, http.MethodGet, "/helm/acme-charts/charts/plain-1.0.0.tgz", f.mem, nil); pull.StatusCode != http.StatusOK || len(pull.Body) != len(plain) {
		t.Fatalf("pull of the noncompliant version: %d", pull.StatusCode)
	}

	// The organization's floor tightens (sources required): every
	// repository of acme is re-checked under the tightened policy.
	if r := ts.DoJSON(t, http.MethodPut, "/v1/organizations/acme/policy", f.own, map[string]any{
		"lint": "error", "deny_files": []string{"*.pem"}, "required_fields": []string{"sources"}}); r.StatusCode != http.StatusOK {
		t.Fatalf("set floor: %d %s", r.StatusCode, r.Body)
	}
	waitRechecked(t, ts)
	if p := chartPolicy(t, ts, f.mem, "acme-charts", "web2", "2.0.0"); p.Status != "noncompliant" || strings.Join(findingRules(p.Findings, "error"), ",") != "required_fields" ||
		!strings.Contains(p.Findings[0].Message, "sources") {
		t.Fatalf("web2 after the floor required sources: %+v", p)
	}

	// Loosening clears the marks.
	if r := ts.DoJSON(t, http.MethodPut, "/v1/organizations/acme/policy", f.own, map[string]any{"lint": "error", "deny_files": []string{"*.pem"}}); r.StatusCode != http.StatusOK {
		t.Fatalf("loosen floor: %d %s", r.StatusCode, r.Body)
	}
	waitRechecked(t, ts)
	if r := ts.DoJSON(t, http.MethodPut, "/v1/repositories/acme-charts/policy", f.own, map[string]any{"required_fields": []string{}}); r.StatusCode != http.StatusOK {
		t.Fatalf("loosen policy: %d %s", r.StatusCode, r.Body)
	}
	waitRechecked(t, ts)
	for _, v := range [][2]string{{"web2", "2.0.0"}, {"plain", "1.0.0"}, {"notpl", "1.0.0"}} {
		if p := chartPolicy(t, ts, f.mem, "acme-charts", v[0], v[1]); p.Status != "ok" || len(findingRules(p.Findings, "error")) != 0 {
			t.Fatalf("%s after loosening: %+v", v[0], p)
		}
	}
	_, done, total, marked := ts.App().RecheckProgress()
	if done != 3 || total != 3 || marked != 0 {
		t.Fatalf("last sweep: %d of %d checked, %d noncompliant", done, total, marked)
	}
}
