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
