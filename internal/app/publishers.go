package app

import (
	"context"
	"strings"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/publishing"
)

// This file manages the trusted publishers of robot accounts (CONTRACT
// §18 "Access"): the OIDC issuers, audiences and claim conditions whose
// tokens /v1/oidc/token exchanges for a short-lived credential of the
// robot. Owners of the robot's organization and server admins manage
// them; robots and exchanged credentials never do.

// PublisherSpec is what a new trusted publisher says.
type PublisherSpec struct {
	Issuer   string
	Audience string
	Claims   map[string]string
}

// publisherRobot loads the robot org/name whose publishers p means to
// read (write false) or change: org owners and server admins, through a
// human credential with org:read or org:write (robotOrgAs). An
// organization p cannot see is ENOTFOUND, as is an unknown robot.
func (a *App) publisherRobot(ctx context.Context, p *chartctl.Principal, org, name string, write bool) (*chartctl.Robot, error) {
	scope := chartctl.ScopeOrgRead
	if write {
		scope = chartctl.ScopeOrgWrite
	}
	o, err := a.robotOrgAs(ctx, p, org, scope, chartctl.RoleOwner, "Only owners of organization %q (and server admins) manage its robots' trusted publishers.")
	if err != nil {
		return nil, err
	}
	return a.loadRobot(ctx, o.Name, name)
}

// Publishers returns the trusted publishers of robot org/name, oldest
// first.
func (a *App) Publishers(ctx context.Context, p *chartctl.Principal, org, name string) ([]*chartctl.TrustedPublisher, error) {
	r, err := a.publisherRobot(ctx, p, org, name, false)
	if err != nil {
		return nil, err
	}
	return a.Store.Publishers(ctx, r.ID)
}

// AddPublisher adds a trusted publisher to robot org/name. The issuer
// must be https (or listed in --oidc-trust-insecure-issuers), the
// audience given, and the claim conditions valid (publishing.ValidateClaims:
// at least one; for GitHub's issuer repository, repository_owner or sub).
// It emits publisher.added.
func (a *App) AddPublisher(ctx context.Context, p *chartctl.Principal, org, name string, spec PublisherSpec) (*chartctl.TrustedPublisher, error) {
	r, err := a.publisherRobot(ctx, p, org, name, true)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(spec.Issuer) == "" {
		return nil, chartctl.Invalid("issuer", "issuer is required: the CI system's OIDC issuer URL, such as %s.", publishing.GitHubIssuer)
	}
	if err := a.Tokens.ValidateIssuer(spec.Issuer); err != nil {
		return nil, err
	}
	if strings.TrimSpace(spec.Audience) == "" || len(spec.Audience) > 500 {
		return nil, chartctl.Invalid("audience", "audience is required (at most 500 characters): the aud the CI system puts in its tokens, usually this server's URL.")
	}
	if err := publishing.ValidateClaims(spec.Issuer, spec.Claims); err != nil {
		return nil, err
	}
	pub := &chartctl.TrustedPublisher{ID: NewID("pub_"), RobotID: r.ID, Issuer: spec.Issuer, Audience: spec.Audience,
		Claims: spec.Claims, CreatedBy: p.User.ID, CreatedAt: a.Now().UTC()}
	ev := a.NewEvent(ctx, chartctl.EventPublisherAdded, "", org, publishersPath(r), pub.ID, PublisherData(r, pub))
	if err := a.Store.AddPublisher(a.Record(ctx, "publisher.add", r.FullName()+"/"+pub.ID, org, ev), pub); err != nil {
		return nil, err
	}
	a.Committed()
	return pub, nil
}

// RemovePublisher removes the trusted publisher id of robot org/name;
// credentials already exchanged through it run out on their own (they
// live at most 15 minutes). It emits publisher.removed.
func (a *App) RemovePublisher(ctx context.Context, p *chartctl.Principal, org, name, id string) error {
	r, err := a.publisherRobot(ctx, p, org, name, true)
	if err != nil {
		return err
	}
	pubs, err := a.Store.Publishers(ctx, r.ID)
	if err != nil {
		return err
	}
	var pub *chartctl.TrustedPublisher
	for _, x := range pubs {
		if x.ID == id {
			pub = x
		}
	}
	if pub == nil {
		return chartctl.Errorf(chartctl.ENOTFOUND, "Robot %s has no trusted publisher %q (chartctl robot publisher list %s --org %s).", r.FullName(), id, r.Name, org)
	}
	ev := a.NewEvent(ctx, chartctl.EventPublisherRemoved, "", org, publishersPath(r), pub.ID, PublisherData(r, pub))
	if err := a.Store.DeletePublisher(a.Record(ctx, "publisher.remove", r.FullName()+"/"+pub.ID, org, ev), r.ID, id); err != nil {
		return err
	}
	a.Committed()
	return nil
}

func publishersPath(r *chartctl.Robot) string {
	return "/v1/organizations/" + r.Organization + "/robots/" + r.Name + "/publishers"
}

// PublisherData is a trusted publisher as events show it, with its robot.
func PublisherData(r *chartctl.Robot, p *chartctl.TrustedPublisher) map[string]any {
	claims := map[string]any{}
	for k, v := range p.Claims {
		claims[k] = v
	}
	return map[string]any{"id": p.ID, "robot": r.FullName(), "issuer": p.Issuer, "audience": p.Audience, "claims": claims,
		"created_at": ts(p.CreatedAt)}
}
