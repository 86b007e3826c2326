package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// testPolicies: admission policies are kept per repository and
// organization ID, replaced whole, and deleted with their owner
// (decision 2).
func testPolicies(t *testing.T, open Open) {
	s := open(t)
	o := mustOrg(t, s, "acme", "")
	r := mustRepo(t, s, "acme-apps", "acme")
	if p, err := s.Policy(ctx, chartctl.PolicyRepository, r.ID); err != nil || p != nil {
		t.Fatalf("no policy yet: %+v %v", p, err)
	}
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	rp := &chartctl.Policy{RequireSignature: "release-key", HoldWindow: 10 * time.Minute, Lint: chartctl.LintError,
		ValuesSchema: true, RequiredFields: []string{"maintainers", "sources"}, NamePattern: "^acme-",
		AllowPrerelease: false, MonotonicVersions: true, ImagesPinned: true, MaxSize: 5 << 20,
		DenyFiles: []string{"*.pem", ".env"}, UpdatedAt: at}
	op := &chartctl.Policy{RequireSignature: chartctl.SignatureAny, Lint: chartctl.LintWarning, AllowPrerelease: true, UpdatedAt: at}
	must(t, s.SetPolicy(ctx, chartctl.PolicyRepository, r.ID, rp))
	must(t, s.SetPolicy(ctx, chartctl.PolicyOrganization, o.ID, op))
	wantCode(t, s.SetPolicy(ctx, chartctl.PolicyRepository, "repo_missing", rp), chartctl.ENOTFOUND)
	wantCode(t, s.SetPolicy(ctx, chartctl.PolicyOrganization, r.ID, op), chartctl.ENOTFOUND)
	got, err := s.Policy(ctx, chartctl.PolicyRepository, r.ID)
	must(t, err)
	if !reflect.DeepEqual(got, rp) {
		t.Fatalf("repository policy\n got %+v\nwant %+v", got, rp)
	}
	all, err := s.Policies(ctx)
	must(t, err)
	if len(all) != 2 {
		t.Fatalf("Policies = %+v", all)
	}
	// Deleted with their owner: a repository of the same name later
	// starts with none.
	if _, err := s.DeleteRepository(ctx, r.Name); err != nil {
		t.Fatal(err)
	}
	must(t, s.DeleteOrganization(ctx, o.Name))
	all, err = s.Policies(ctx)
	must(t, err)
	if len(all) != 0 {
		t.Fatalf("policies left behind: %+v", all)
	}
}

// testVersionPolicies: a chart version keeps its admission verdict (issue
// #30) as PutChartVersion gives it, SetVersionPolicy replaces or clears it
// for the archive it was computed on only, and listings carry it.
func testVersionPolicies(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "apps", "")
	at := time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)
	pushed := &chartctl.VersionPolicy{CheckedAt: at, Findings: []chartctl.Finding{
		{Rule: chartctl.RuleLint, Severity: chartctl.SeverityWarning, Message: "templates/: no templates"}}}
	cv := chart("apps", "web", "1.0.0")
	cv.Policy = pushed
	mustPut(t, s, cv)
	plain := mustPut(t, s, chart("apps", "web", "1.1.0"))
	got, err := s.ChartVersion(ctx, "apps", "web", "1.0.0")
	must(t, err)
	if !reflect.DeepEqual(got.Policy, pushed) {
		t.Fatalf("verdict kept at push\n got %+v\nwant %+v", got.Policy, pushed)
	}
	if got, err := s.ChartVersion(ctx, "apps", "web", "1.1.0"); err != nil || got.Policy != nil {
		t.Fatalf("a version pushed without a verdict: %+v, %v", got.Policy, err)
	}

	marked := &chartctl.VersionPolicy{CheckedAt: at.Add(time.Hour), PolicyAt: at.Add(50 * time.Minute), Findings: []chartctl.Finding{
		{Rule: chartctl.RuleRequiredFields, Severity: chartctl.SeverityError, Message: "Chart.yaml lacks sources"},
		{Rule: chartctl.RuleLint, Severity: chartctl.SeverityWarning, Message: "templates/: no templates"}}}
	wantCode(t, s.SetVersionPolicy(ctx, "apps", "web", "1.1.0", Digest("another archive"), marked), chartctl.ENOTFOUND)
	wantCode(t, s.SetVersionPolicy(ctx, "apps", "web", "9.9.9", plain.Digest, marked), chartctl.ENOTFOUND)
	wantCode(t, s.SetVersionPolicy(ctx, "nope", "web", "1.1.0", plain.Digest, marked), chartctl.ENOTFOUND)
	must(t, s.SetVersionPolicy(ctx, "apps", "web", "1.1.0", plain.Digest, marked))
	list, err := s.ChartVersions(ctx, "apps", chartctl.ChartFilter{Name: "web"})
	must(t, err)
	byVersion := map[string]*chartctl.ChartVersion{}
	for _, v := range list {
		byVersion[v.Version] = v
	}
	if !reflect.DeepEqual(byVersion["1.1.0"].Policy, marked) || !byVersion["1.1.0"].Policy.Noncompliant() {
		t.Fatalf("listed verdict\n got %+v\nwant %+v", byVersion["1.1.0"].Policy, marked)
	}
	if !reflect.DeepEqual(byVersion["1.0.0"].Policy, pushed) || byVersion["1.0.0"].Policy.Noncompliant() {
		t.Fatalf("the other version's verdict changed: %+v", byVersion["1.0.0"].Policy)
	}
	// Recording a verdict leaves the rest of the version alone.
	got, err = s.ChartVersion(ctx, "apps", "web", "1.1.0")
	must(t, err)
	wantChart(t, got, plain)

	must(t, s.SetVersionPolicy(ctx, "apps", "web", "1.1.0", plain.Digest, nil))
	if got, err := s.ChartVersion(ctx, "apps", "web", "1.1.0"); err != nil || got.Policy != nil {
		t.Fatalf("a cleared verdict: %+v, %v", got.Policy, err)
	}
	// A replaced archive takes the new upload's verdict.
	next := chart("apps", "web", "1.0.0")
	next.Digest = Digest("web 1.0.0 rebuilt")
	_, _, _, err = s.PutChartVersion(ctx, next, chartctl.PutVersionOptions{Overwrite: true})
	must(t, err)
	if got, err := s.ChartVersion(ctx, "apps", "web", "1.0.0"); err != nil || got.Policy != nil {
		t.Fatalf("a replaced archive kept the old verdict: %+v, %v", got.Policy, err)
	}
}
