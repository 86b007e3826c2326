package server

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// This file answers the admission policies of CONTRACT §18:
// /v1/repositories/:repo/policy and /v1/organizations/:org/policy.

func (s *Server) handleGetRepoPolicy(c echo.Context) error {
	v, err := s.app.RepositoryPolicy(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"))
	if err != nil {
		return err
	}
	return httpx.Data(c, client.RepositoryPolicy{Policy: toPolicy(v.Policy), Effective: toPolicy(v.Effective)})
}

func (s *Server) handlePutRepoPolicy(c echo.Context) error {
	in, err := bindPolicy(c)
	if err != nil {
		return err
	}
	v, err := s.app.SetRepositoryPolicy(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"), in)
	if err != nil {
		return err
	}
	return httpx.Data(c, client.RepositoryPolicy{Policy: toPolicy(v.Policy), Effective: toPolicy(v.Effective)})
}

func (s *Server) handleGetOrgPolicy(c echo.Context) error {
	p, err := s.app.OrganizationFloor(c.Request().Context(), httpx.PrincipalOf(c), c.Param("org"))
	if err != nil {
		return err
	}
	return httpx.Data(c, toPolicy(p))
}

func (s *Server) handlePutOrgPolicy(c echo.Context) error {
	in, err := bindPolicy(c)
	if err != nil {
		return err
	}
	p, err := s.app.SetOrganizationFloor(c.Request().Context(), httpx.PrincipalOf(c), c.Param("org"), in)
	if err != nil {
		return err
	}
	return httpx.Data(c, toPolicy(p))
}

// bindPolicy reads a policy document; hold_window is a duration such as
// "10m".
func bindPolicy(c echo.Context) (app.PolicyInput, error) {
	var req client.PolicyUpdate
	if err := httpx.BindJSON(c, &req); err != nil {
		return app.PolicyInput{}, err
	}
	in := app.PolicyInput{RequireSignature: req.RequireSignature, Lint: req.Lint, ValuesSchema: req.ValuesSchema,
		RequiredFields: req.RequiredFields, NamePattern: req.NamePattern, AllowPrerelease: req.AllowPrerelease,
		MonotonicVersions: req.MonotonicVersions, ImagesPinned: req.ImagesPinned, MaxSize: req.MaxSize, DenyFiles: req.DenyFiles}
	if req.HoldWindow != nil {
		d, err := time.ParseDuration(*req.HoldWindow)
		if err != nil || d < 0 {
			return in, chartctl.Invalid("hold_window", "hold_window must be a duration such as 10m or 0s, not %q.", *req.HoldWindow)
		}
		in.HoldWindow = &d
	}
	return in, nil
}

func toPolicy(p chartctl.Policy) client.Policy {
	out := client.Policy{RequireSignature: p.RequireSignature, HoldWindow: p.HoldWindow.String(), Lint: p.Lint,
		ValuesSchema: p.ValuesSchema, RequiredFields: nonNilStrings(p.RequiredFields), NamePattern: p.NamePattern,
		AllowPrerelease: p.AllowPrerelease, MonotonicVersions: p.MonotonicVersions, ImagesPinned: p.ImagesPinned,
		MaxSize: p.MaxSize, DenyFiles: nonNilStrings(p.DenyFiles)}
	if out.RequireSignature == "" {
		out.RequireSignature = chartctl.SignatureNone
	}
	if out.Lint == "" {
		out.Lint = chartctl.LintOff
	}
	if !p.UpdatedAt.IsZero() {
		t := p.UpdatedAt.UTC()
		out.UpdatedAt = &t
	}
	return out
}

// toVersionPolicy is the /v1 form of a version's admission verdict; a
// version no policy checked is ok with no findings.
// versionPolicyOf is the policy summary of chart version cv: its stored
// verdict, with the status "held" while it waits for its signature.
func versionPolicyOf(cv *chartctl.ChartVersion) *client.VersionPolicy {
	out := toVersionPolicy(cv.Policy)
	if cv.Held() {
		out.Status = chartctl.PolicyStatusHeld
	}
	return out
}

func toVersionPolicy(p *chartctl.VersionPolicy) *client.VersionPolicy {
	out := &client.VersionPolicy{Status: chartctl.PolicyStatusOK, Findings: []client.Finding{}}
	if p == nil {
		return out
	}
	if p.Noncompliant() {
		out.Status = chartctl.PolicyStatusNoncompliant
	}
	out.Findings = toFindings(p.Findings)
	if !p.CheckedAt.IsZero() {
		t := p.CheckedAt.UTC()
		out.CheckedAt = &t
	}
	return out
}

func toFindings(fs []chartctl.Finding) []client.Finding {
	out := make([]client.Finding, len(fs))
	for i, f := range fs {
		out[i] = client.Finding{Rule: f.Rule, Severity: f.Severity, Message: f.Message}
	}
	return out
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
