package app

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/publishing"
	"github.com/chartctl/chartctl/internal/token"
)

// This file is the token exchange of trusted publishing (POST
// /v1/oidc/token, RFC 8693): a CI job's OIDC ID token, verified against
// its issuer and matched against the trusted publishers that name that
// issuer, becomes a short-lived credential of the publisher's robot.

// ExchangedTTL is the most an exchanged credential lives. It counts from
// the exchange, not from the subject token's exp (as PyPI's trusted
// publishing does): a CI token lives about five minutes, a chart push
// over a slow link may take longer, and the token proved who the job is
// at the moment of the exchange. The robot's own expiry caps it.
const ExchangedTTL = 15 * time.Minute

// The RFC 8693 values the exchange accepts.
const (
	GrantTypeTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeIDToken       = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeJWT           = "urn:ietf:params:oauth:token-type:jwt"
	TokenTypeAccessToken   = "urn:ietf:params:oauth:token-type:access_token"
)

// ExchangeRequest is a token exchange request's parameters.
type ExchangeRequest struct {
	GrantType          string
	SubjectToken       string
	SubjectTokenType   string
	RequestedTokenType string
	// Robot is ORG/NAME, to choose when several publishers match.
	Robot string
}

// Exchanged is a credential made by an exchange.
type Exchanged struct {
	// Token is the credential's value, shown once.
	Token     string
	ExpiresAt time.Time
	Robot     *chartctl.Robot
	Publisher *chartctl.TrustedPublisher
	// Matched are the claims the publisher's conditions matched.
	Matched map[string]string
}

// ExchangeToken exchanges a trusted publisher's OIDC token for a
// credential of its robot. A refused request returns a
// *publishing.Refusal (its Code the RFC 8693 error, its Description
// naming the failed check); other errors are the store's. Every exchange
// is audited (oidc.exchange) with the claims that matched, or the check
// that failed.
func (a *App) ExchangeToken(ctx context.Context, req ExchangeRequest) (*Exchanged, error) {
	ex, audit, err := a.exchange(ctx, req)
	if err != nil {
		if r, ok := err.(*publishing.Refusal); ok {
			a.auditExchange(ctx, audit, chartctl.OutcomeDenied, r)
		}
		return nil, err
	}
	return ex, nil
}

// exchangeAudit is what the audit entry of an exchange names.
type exchangeAudit struct {
	issuer, subject string
	robot           *chartctl.Robot
	publisher       string
	credential      string
	claims          map[string]string
}

func (a *App) exchange(ctx context.Context, req ExchangeRequest) (*Exchanged, *exchangeAudit, error) {
	au := &exchangeAudit{}
	switch req.GrantType {
	case GrantTypeTokenExchange:
	case "":
		return nil, au, &publishing.Refusal{Code: "invalid_request", Check: publishing.CheckRequest, Description: "grant_type is required: " + GrantTypeTokenExchange + "."}
	default:
		return nil, au, &publishing.Refusal{Code: "unsupported_grant_type", Check: publishing.CheckRequest, Description: "The only grant_type accepted here is " + GrantTypeTokenExchange + "."}
	}
	if req.SubjectToken == "" {
		return nil, au, refusal(publishing.CheckRequest, "subject_token is required: the CI job's OIDC ID token.")
	}
	if req.SubjectTokenType != TokenTypeIDToken && req.SubjectTokenType != TokenTypeJWT {
		return nil, au, refusal(publishing.CheckRequest, "subject_token_type must be %s.", TokenTypeIDToken)
	}
	if req.RequestedTokenType != "" && req.RequestedTokenType != TokenTypeAccessToken {
		return nil, au, refusal(publishing.CheckRequest, "requested_token_type may only be %s.", TokenTypeAccessToken)
	}
	st := a.Store
	iss, err := publishing.Issuer(req.SubjectToken)
	if err != nil {
		return nil, au, err
	}
	au.issuer = iss
	// Only issuers a publisher names are ever fetched: an attacker's iss
	// stops here (no SSRF through the token).
	pubs, err := st.PublishersByIssuer(ctx, iss)
	if err != nil {
		return nil, au, err
	}
	if len(pubs) == 0 {
		return nil, au, refusal(publishing.CheckIssuer, "No trusted publisher accepts tokens of issuer %q; an organization owner adds one with `chartctl robot publisher add`.", iss)
	}
	if req.Robot != "" {
		org, name, ok := strings.Cut(req.Robot, "/")
		r, err := st.Robot(ctx, org, name)
		if !ok || chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return nil, au, &publishing.Refusal{Code: "invalid_target", Check: publishing.CheckRobot, Description: fmt.Sprintf("robot %q has no trusted publisher for issuer %q; pass robot=ORG/NAME of a robot that has one.", req.Robot, iss)}
		} else if err != nil {
			return nil, au, err
		}
		pubs = filterPublishers(pubs, r.ID)
		if len(pubs) == 0 {
			return nil, au, &publishing.Refusal{Code: "invalid_target", Check: publishing.CheckRobot, Description: fmt.Sprintf("robot %q has no trusted publisher for issuer %q.", req.Robot, iss)}
		}
	}
	tok, err := a.Tokens.Verify(ctx, req.SubjectToken, iss)
	if err != nil {
		return nil, au, err
	}
	au.subject = tok.Subject
	var (
		matches  []*chartctl.TrustedPublisher
		matched  []map[string]string
		refused  *publishing.Refusal
		refusedP *chartctl.TrustedPublisher
	)
	for _, p := range pubs {
		m, r := publishing.Match(tok, p)
		if r == nil {
			matches, matched = append(matches, p), append(matched, m)
			continue
		}
		// The refusal said is the one of the publisher the token came
		// closest to: a wrong claim after a right audience beats a wrong
		// audience.
		if refused == nil || (refused.Check == publishing.CheckAudience && r.Check != publishing.CheckAudience) {
			refused, refusedP = r, p
		}
	}
	if len(matches) == 0 {
		if len(pubs) == 1 || refused.Check == publishing.CheckClaim {
			if r, err := st.RobotByID(ctx, refusedP.RobotID); err == nil {
				au.robot, au.publisher = r, refusedP.ID
			}
		}
		return nil, au, refused
	}
	robots := map[string]*chartctl.Robot{}
	for _, p := range matches {
		if robots[p.RobotID] != nil {
			continue
		}
		r, err := st.RobotByID(ctx, p.RobotID)
		if err != nil {
			return nil, au, err
		}
		robots[p.RobotID] = r
	}
	if len(robots) > 1 {
		names := make([]string, 0, len(robots))
		for _, r := range robots {
			names = append(names, r.FullName())
		}
		sort.Strings(names)
		return nil, au, refusal(publishing.CheckAmbiguous, "This token matches trusted publishers of several robots (%s); pass robot=ORG/NAME to choose one (chartctl: --robot).", strings.Join(names, ", "))
	}
	// One robot: its oldest matching publisher.
	pub, robot := matches[0], robots[matches[0].RobotID]
	au.robot, au.publisher, au.claims = robot, pub.ID, matched[0]
	now := a.Now().UTC()
	if robot.Disabled {
		return nil, au, refusal(publishing.CheckRobot, "Robot %s is disabled; an owner of %s enables it with `chartctl robot enable %s --org %s`.", robot.FullName(), robot.Organization, robot.Name, robot.Organization)
	}
	if robot.Expired(now) {
		return nil, au, refusal(publishing.CheckRobot, "Robot %s expired at %s; an owner of %s extends it.", robot.FullName(), robot.ExpiresAt.UTC().Format(time.RFC3339), robot.Organization)
	}
	// The jti is remembered last, once everything else holds, until the
	// token's own expiry: a replay within that time is refused, and after
	// it the token is refused as expired.
	fresh, err := st.RememberTokenID(context.WithoutCancel(ctx), iss, tok.JTI, tok.Expiry)
	if err != nil {
		return nil, au, err
	}
	if !fresh {
		return nil, au, refusal(publishing.CheckReplay, "This token (jti %q) was already exchanged; each CI token is exchanged once. Request a fresh token, or reuse the credential the first exchange returned (chartctl keeps it for its lifetime).", tok.JTI)
	}
	expires := robot.Until(now.Add(ExchangedTTL)).UTC()
	value, hash := token.New(token.ExchangedPrefix)
	cred := &chartctl.ExchangedCredential{ID: NewID("exc_"), RobotID: robot.ID, PublisherID: pub.ID, Hash: hash, ExpiresAt: expires, CreatedAt: now}
	au.credential = cred.ID
	if err := st.CreateExchangedCredential(a.exchangeRecord(ctx, au, chartctl.OutcomeSuccess, nil), cred); err != nil {
		return nil, au, err
	}
	return &Exchanged{Token: value, ExpiresAt: expires, Robot: robot, Publisher: pub, Matched: au.claims}, au, nil
}

func refusal(check, format string, args ...any) *publishing.Refusal {
	return &publishing.Refusal{Code: "invalid_request", Check: check, Description: fmt.Sprintf(format, args...)}
}

func filterPublishers(pubs []*chartctl.TrustedPublisher, robotID string) []*chartctl.TrustedPublisher {
	var out []*chartctl.TrustedPublisher
	for _, p := range pubs {
		if p.RobotID == robotID {
			out = append(out, p)
		}
	}
	return out
}

// exchangeEntry is the audit entry of an exchange: the robot and
// publisher as the actor's credential, and as target the robot (or the
// issuer, when no robot was found) with the claims that matched, or the
// failed check with the token's subject.
func (a *App) exchangeEntry(ctx context.Context, au *exchangeAudit, outcome chartctl.Outcome, r *publishing.Refusal) *chartctl.AuditEntry {
	act := chartctl.ActorFrom(ctx)
	act.CredentialKind = chartctl.CredentialExchanged
	act.CredentialID, act.Publisher = au.credential, au.publisher
	e := &chartctl.AuditEntry{Time: a.Now().UTC(), Action: "oidc.exchange", Outcome: outcome}
	var target strings.Builder
	if au.robot != nil {
		act.Robot = au.robot.FullName()
		e.Organization = au.robot.Organization
		target.WriteString(au.robot.FullName())
		if au.publisher != "" {
			target.WriteString(" via " + au.publisher)
		}
	} else {
		target.WriteString(au.issuer)
	}
	if r != nil {
		fmt.Fprintf(&target, " refused (%s)", r.Check)
		if au.subject != "" {
			fmt.Fprintf(&target, " sub=%s", au.subject)
		}
	} else {
		names := make([]string, 0, len(au.claims))
		for k := range au.claims {
			names = append(names, k)
		}
		sort.Strings(names)
		target.WriteString(" matched")
		for _, k := range names {
			fmt.Fprintf(&target, " %s=%s", k, au.claims[k])
		}
	}
	e.Actor, e.Target = act, target.String()
	return e
}

// exchangeRecord returns ctx carrying the audit entry of a successful
// exchange, to be written with the credential.
func (a *App) exchangeRecord(ctx context.Context, au *exchangeAudit, outcome chartctl.Outcome, r *publishing.Refusal) context.Context {
	if a.noAudit {
		return ctx
	}
	return chartctl.WithChange(ctx, &chartctl.Change{Audit: []*chartctl.AuditEntry{a.exchangeEntry(ctx, au, outcome, r)}})
}

// AuditExchangeRefusal records an exchange a transport refused before
// ExchangeToken saw it (a body that is not a form).
func (a *App) AuditExchangeRefusal(ctx context.Context, r *publishing.Refusal) {
	a.auditExchange(ctx, &exchangeAudit{issuer: "(no token read)"}, chartctl.OutcomeDenied, r)
}

// auditExchange records a refused exchange.
func (a *App) auditExchange(ctx context.Context, au *exchangeAudit, outcome chartctl.Outcome, r *publishing.Refusal) {
	if a.noAudit {
		return
	}
	if err := a.Store.AppendAudit(context.WithoutCancel(ctx), a.exchangeEntry(ctx, au, outcome, r)); err != nil {
		a.Logger.Error("append audit entry", "action", "oidc.exchange", "err", err)
	}
}
