package app

import (
	"bytes"
	"context"
	"io"
	"net/url"
	"time"

	"github.com/chartctl/chartctl/internal/admission"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// PolicyView is a repository's admission policy as its readers see it:
// its own and the one its charts meet once its organization's floor is
// applied.
type PolicyView struct {
	Policy chartctl.Policy
	// Effective is Policy tightened by the organization's floor.
	Effective chartctl.Policy
}

// RepositoryPolicy returns repository name's admission policy, which p
// must be allowed to read (DefaultPolicy when it set none).
func (a *App) RepositoryPolicy(ctx context.Context, p *chartctl.Principal, name string) (*PolicyView, error) {
	r, err := a.ReadableRepo(ctx, p, name)
	if err != nil {
		return nil, err
	}
	own, floor, err := a.policies(ctx, r)
	if err != nil {
		return nil, err
	}
	return &PolicyView{Policy: own, Effective: admission.Effective(floor, own)}, nil
}

// policies returns r's own policy and its organization's floor, each
// DefaultPolicy when unset.
func (a *App) policies(ctx context.Context, r *chartctl.Repository) (own, floor chartctl.Policy, err error) {
	own, floor = chartctl.DefaultPolicy(), chartctl.DefaultPolicy()
	if pol, err := a.Store.Policy(ctx, chartctl.PolicyRepository, r.ID); err != nil {
		return own, floor, err
	} else if pol != nil {
		own = *pol
	}
	if r.Organization != "" {
		o, err := a.Store.Organization(ctx, r.Organization)
		if err != nil {
			return own, floor, err
		}
		if pol, err := a.Store.Policy(ctx, chartctl.PolicyOrganization, o.ID); err != nil {
			return own, floor, err
		} else if pol != nil {
			floor = *pol
		}
	}
	return own, floor, nil
}

// OrganizationFloor returns the admission policy organization name sets
// for all its repositories (DefaultPolicy when it set none). p must see
// the organization.
func (a *App) OrganizationFloor(ctx context.Context, p *chartctl.Principal, name string) (chartctl.Policy, error) {
	o, err := a.VisibleOrg(ctx, p, name)
	if err != nil {
		return chartctl.Policy{}, err
	}
	pol, err := a.Store.Policy(ctx, chartctl.PolicyOrganization, o.ID)
	if err != nil || pol == nil {
		return chartctl.DefaultPolicy(), err
	}
	return *pol, nil
}

// SetRepositoryPolicy replaces repository name's admission policy: a
// setting, so the maintain role. A policy looser than the organization's
// floor in any rule is refused (EPOLICY naming each rule, decision 19).
// Versions stored before are not deleted; the background sweep
// (RecheckLater) marks those that no longer comply.
func (a *App) SetRepositoryPolicy(ctx context.Context, p *chartctl.Principal, name string, in PolicyInput) (*PolicyView, error) {
	r, err := a.WritableRepo(ctx, p, name, SettingsRole)
	if err != nil {
		return nil, err
	}
	_, floor, err := a.policies(ctx, r)
	if err != nil {
		return nil, err
	}
	// Left-out fields take the floor's value, so a document that names
	// only what it adds never loosens the floor by omission.
	pol := in.apply(floor)
	if err := admission.Validate(&pol); err != nil {
		return nil, err
	}
	if vs := admission.Looser(floor, pol); len(vs) > 0 {
		return nil, &chartctl.PolicyViolation{Repository: r.Name, Violations: vs, Floor: r.Organization}
	}
	pol.UpdatedAt = a.Now().UTC()
	rctx := a.Record(ctx, "policy.update", r.Name, r.Organization,
		a.NewEvent(ctx, chartctl.EventPolicyUpdated, r.Name, r.Organization, repoPath(r.Name)+"/policy", r.Name, map[string]any{"repository": r.Name, "policy": PolicyData(pol)}))
	if err := a.Store.SetPolicy(rctx, chartctl.PolicyRepository, r.ID, &pol); err != nil {
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return nil, RepoNotFound(name)
		}
		return nil, err
	}
	a.Committed()
	a.releaseHeldIn(context.WithoutCancel(ctx), func(repo string) bool { return repo == r.Name })
	// Stored versions stay; the sweep marks those that no longer comply.
	a.RecheckLater(chartctl.PolicyRepository, r.Name)
	return &PolicyView{Policy: pol, Effective: admission.Effective(floor, pol)}, nil
}

// SetOrganizationFloor replaces the admission policy every repository of
// organization name must meet: the owner role (org:write scope).
func (a *App) SetOrganizationFloor(ctx context.Context, p *chartctl.Principal, name string, in PolicyInput) (chartctl.Policy, error) {
	o, err := a.robotOrgAs(ctx, p, name, chartctl.ScopeOrgWrite, chartctl.RoleOwner, "Setting the admission policy of organization %q needs the owner role there.")
	if err != nil {
		return chartctl.Policy{}, err
	}
	pol := in.apply(chartctl.DefaultPolicy())
	if err := admission.Validate(&pol); err != nil {
		return chartctl.Policy{}, err
	}
	pol.UpdatedAt = a.Now().UTC()
	rctx := a.Record(ctx, "policy.update", "organization:"+o.Name, o.Name,
		a.NewEvent(ctx, chartctl.EventPolicyUpdated, "", o.Name, "/v1/organizations/"+url.PathEscape(o.Name)+"/policy", o.Name, map[string]any{"organization": o.Name, "policy": PolicyData(pol)}))
	if err := a.Store.SetPolicy(rctx, chartctl.PolicyOrganization, o.ID, &pol); err != nil {
		return chartctl.Policy{}, err
	}
	a.Committed()
	a.releaseHeldIn(context.WithoutCancel(ctx), func(repo string) bool {
		r, err := a.Store.Repository(ctx, repo)
		return err == nil && r.Organization == o.Name
	})
	a.RecheckLater(chartctl.PolicyOrganization, o.Name)
	return pol, nil
}

// PolicyInput is a policy document as a person sent it: nil fields were
// left out.
type PolicyInput struct {
	RequireSignature  *string
	HoldWindow        *time.Duration
	Lint              *string
	ValuesSchema      *bool
	RequiredFields    *[]string
	NamePattern       *string
	AllowPrerelease   *bool
	MonotonicVersions *bool
	ImagesPinned      *bool
	MaxSize           *int64
	DenyFiles         *[]string
}

// apply returns base with the fields in sets.
func (in PolicyInput) apply(base chartctl.Policy) chartctl.Policy {
	p := base
	set(&p.RequireSignature, in.RequireSignature)
	set(&p.HoldWindow, in.HoldWindow)
	set(&p.Lint, in.Lint)
	set(&p.ValuesSchema, in.ValuesSchema)
	set(&p.RequiredFields, in.RequiredFields)
	set(&p.NamePattern, in.NamePattern)
	set(&p.AllowPrerelease, in.AllowPrerelease)
	set(&p.MonotonicVersions, in.MonotonicVersions)
	set(&p.ImagesPinned, in.ImagesPinned)
	set(&p.MaxSize, in.MaxSize)
	set(&p.DenyFiles, in.DenyFiles)
	return p
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// PolicyData is a policy as events carry it (the /v1 field names).
func PolicyData(p chartctl.Policy) map[string]any {
	return map[string]any{
		"require_signature": p.RequireSignature, "hold_window": FormatDuration(p.HoldWindow), "lint": p.Lint,
		"values_schema": p.ValuesSchema, "required_fields": nonNil(p.RequiredFields), "name_pattern": p.NamePattern,
		"allow_prerelease": p.AllowPrerelease, "monotonic_versions": p.MonotonicVersions, "images_pinned": p.ImagesPinned,
		"max_size": p.MaxSize, "deny_files": nonNil(p.DenyFiles),
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Admission is the verdict of a repository's policy on an upload.
type Admission struct {
	// Findings are every rule the chart broke (lint warnings included).
	Findings []chartctl.Finding
	// Hold, when not zero, says the chart lacks the signature the policy
	// requires and is stored held for that long (the policy's
	// hold_window) instead of refused.
	Hold time.Duration
	// Verdict is what the version keeps of it once stored; nil under
	// the default policy, which checks nothing.
	Verdict *chartctl.VersionPolicy
}

// CheckPolicy runs repository r's effective admission policy on u and
// returns its findings, or the *chartctl.PolicyViolation (EPOLICY) that
// refuses u; it stores nothing (the write path and dry runs share it).
func (a *App) CheckPolicy(ctx context.Context, r *chartctl.Repository, u *Upload) (*Admission, error) {
	own, floor, err := a.policies(ctx, r)
	if err != nil {
		return nil, err
	}
	pol := admission.Effective(floor, own)
	if pol.IsDefault() {
		return &Admission{}, nil
	}
	archive, err := a.uploadArchive(ctx, u)
	if err != nil {
		return nil, err
	}
	in := admission.Input{Archive: archive, Chart: u.Chart, Limits: a.Config.ChartLimits, Lint: a.Lint}
	if pol.MonotonicVersions {
		vs, err := a.Store.ChartVersions(ctx, r.Name, chartctl.ChartFilter{Name: u.Chart.Name})
		if err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return nil, err
		}
		for _, v := range vs {
			if v.Version != u.Chart.Version {
				in.Stored = append(in.Stored, v.Version)
			}
		}
	}
	in.Verification = chartctl.PolicyVerification{Status: chartctl.VerificationUnsigned}
	if pol.RequireSignature != chartctl.SignatureNone && a.SignatureStatus != nil {
		var prov []byte
		if u.provBytes != nil {
			prov = u.provBytes.Bytes()
		}
		if in.Verification, err = a.SignatureStatus(ctx, r, u.Chart.Name, u.Chart.Version, archive, prov); err != nil {
			return nil, err
		}
	}
	res, err := admission.Evaluate(ctx, pol, in)
	if err != nil {
		return nil, err
	}
	// Without a hold window an unsigned chart is refused at once; with
	// one it is stored held, unless another rule refuses it anyway.
	hold := res.Unsigned != nil && pol.HoldWindow > 0
	if err := res.Refusal(r.Name, hold); err != nil {
		return nil, err
	}
	policyAt := own.UpdatedAt
	if floor.UpdatedAt.After(policyAt) {
		policyAt = floor.UpdatedAt
	}
	adm := &Admission{Findings: res.Findings,
		Verdict: &chartctl.VersionPolicy{Findings: res.Findings, CheckedAt: a.Now().UTC(), PolicyAt: policyAt.UTC()}}
	if hold {
		adm.Hold = pol.HoldWindow
		adm.Findings = append(adm.Findings, chartctl.Finding{Rule: res.Unsigned.Rule, Severity: "warning",
			Message: res.Unsigned.Message + "; it is held for " + FormatDuration(pol.HoldWindow) + " and released once a signature verifies, else deleted"})
	}
	return adm, nil
}

// uploadArchive returns the bytes of u's archive: kept in memory while it
// was received, or read back from the blob store for an archive that was
// already stored (an OCI layer).
func (a *App) uploadArchive(ctx context.Context, u *Upload) ([]byte, error) {
	if u.archive != nil {
		return u.archive.Bytes(), nil
	}
	if sb, ok := u.blob.(*storedBlob); ok {
		b, err := a.ReadBlob(ctx, sb.digest)
		if err != nil {
			return nil, err
		}
		defer b.Close()
		var buf bytes.Buffer
		if _, err := io.Copy(&buf, io.LimitReader(b, a.Config.MaxChartSize+1)); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	return nil, chartctl.Errorf(chartctl.EINTERNAL, "The chart archive is not available for the admission policy.")
}
