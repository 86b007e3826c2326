package chartctl

import (
	"context"
	"time"
)

// EPOLICY: a repository's admission policy refused a chart (CONTRACT §18,
// 422). The *PolicyViolation in the error's chain lists every rule.
const EPOLICY = "policy_violation"

// EventPolicyUpdated is sent when a repository's or organization's
// admission policy changes (decision 21).
const EventPolicyUpdated EventType = "policy.updated"

// Admission policy rule names: the policy's field names, as
// violations[].rule and findings[].rule carry them (CONTRACT §18).
const (
	RuleRequireSignature  = "require_signature"
	RuleLint              = "lint"
	RuleValuesSchema      = "values_schema"
	RuleRequiredFields    = "required_fields"
	RuleNamePattern       = "name_pattern"
	RuleAllowPrerelease   = "allow_prerelease"
	RuleMonotonicVersions = "monotonic_versions"
	RuleImagesPinned      = "images_pinned"
	RuleMaxSize           = "max_size"
	RuleDenyFiles         = "deny_files"
)

// Lint levels of Policy.Lint.
const (
	LintOff     = "off"
	LintWarning = "warning"
	LintError   = "error"
)

// Reserved values of Policy.RequireSignature (decision 19); any other
// value names a trust entry.
const (
	SignatureNone = "none"
	SignatureAny  = "any"
)

// Policy scopes: whose policy a PolicyStore record is.
const (
	PolicyRepository   = "repository"
	PolicyOrganization = "organization"
)

// Policy is the admission policy of a repository, or the floor an
// organization sets for all of its repositories (CONTRACT §18, decision
// 19). The zero value is not the empty policy: use DefaultPolicy, since
// pre-releases are allowed unless a policy says otherwise.
type Policy struct {
	// RequireSignature is SignatureNone, SignatureAny or a trust entry's
	// name.
	RequireSignature string
	// HoldWindow is how long an unsigned version waits, held, for its
	// signature when a signature is required; 0 refuses it at once.
	HoldWindow time.Duration
	// Lint is LintOff, LintWarning (findings only) or LintError (lint
	// errors refuse the chart).
	Lint string
	// ValuesSchema requires a chart's values.schema.json, where it has
	// one, to be a valid JSON Schema its default values satisfy.
	ValuesSchema bool
	// RequiredFields names Chart.yaml fields that must be set.
	RequiredFields []string
	// NamePattern is a regular expression chart names must match.
	NamePattern string
	// AllowPrerelease lets SemVer pre-release versions in.
	AllowPrerelease bool
	// MonotonicVersions requires a new version to be greater than every
	// stored version of its chart.
	MonotonicVersions bool
	// ImagesPinned requires the images the chart lists (the
	// artifacthub.io/images annotation) to be pinned by digest.
	ImagesPinned bool
	// MaxSize is the largest archive accepted, in bytes (0: no limit
	// beyond the server's).
	MaxSize int64
	// DenyFiles are globs of files a chart may not contain, relative to
	// the chart's root; a glob without "/" matches a base name anywhere.
	DenyFiles []string
	// UpdatedAt is when the policy was last set.
	UpdatedAt time.Time
}

// DefaultPolicy is the policy of a repository or organization that set
// none: it refuses nothing.
func DefaultPolicy() Policy {
	return Policy{RequireSignature: SignatureNone, Lint: LintOff, AllowPrerelease: true}
}

// IsDefault reports whether p refuses and records nothing.
func (p Policy) IsDefault() bool {
	return (p.RequireSignature == "" || p.RequireSignature == SignatureNone) &&
		(p.Lint == "" || p.Lint == LintOff) && !p.ValuesSchema && len(p.RequiredFields) == 0 &&
		p.NamePattern == "" && p.AllowPrerelease && !p.MonotonicVersions && !p.ImagesPinned &&
		p.MaxSize == 0 && len(p.DenyFiles) == 0
}

// Violation is one rule a chart broke.
type Violation struct {
	// Rule is one of the Rule* names.
	Rule string
	// Message says what broke the rule, for a person.
	Message string
}

// Finding is what an admission check recorded on a version: a
// violation, or a warning kept without refusing (lint at "warning").
type Finding struct {
	Rule string
	// Severity is "error" or "warning".
	Severity string
	Message  string
}

// VersionPolicy is a stored chart version's admission verdict (CONTRACT
// §18 "policy"). A policy change never deletes a stored version; the
// background re-check records here which rules it no longer meets.
type VersionPolicy struct {
	// Findings are those of the latest check: at push, what the policy
	// kept without refusing (lint warnings); after a re-check, every rule
	// the version breaks under the repository's effective policy
	// (severity "error") and its warnings.
	Findings []Finding
	// CheckedAt is when the findings were computed.
	CheckedAt time.Time
	// PolicyAt is the UpdatedAt of the effective policy they were
	// computed under (the later of the repository's and its
	// organization's), zero for the default policy.
	PolicyAt time.Time
}

// Noncompliant reports whether the version breaks a rule of the policy
// it was last checked against.
func (v *VersionPolicy) Noncompliant() bool {
	if v == nil {
		return false
	}
	for _, f := range v.Findings {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Finding severities.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Version policy statuses (the /v1 policy.status).
const (
	PolicyStatusOK           = "ok"
	PolicyStatusHeld         = "held"
	PolicyStatusNoncompliant = "noncompliant"
)

// PolicyViolation is the error of a chart an admission policy refused:
// its Violations name every broken rule. ErrorCode gives EPOLICY.
type PolicyViolation struct {
	Repository string
	Violations []Violation
	// Floor, when set, names the organization whose floor a repository
	// policy being set would loosen (the refusal is of the policy, not of
	// a chart).
	Floor string
}

// Error implements error with the message a person reads.
func (e *PolicyViolation) Error() string { return e.Message() }

// Unwrap gives the *Error (EPOLICY) that ErrorCode and ErrorMessage read.
func (e *PolicyViolation) Unwrap() error { return &Error{Code: EPOLICY, Message: e.Message()} }

// Message names every violated rule and what broke it.
func (e *PolicyViolation) Message() string {
	if e.Floor != "" {
		msg := "The policy of repository " + quote(e.Repository) + " may only tighten the policy of organization " + quote(e.Floor) + ":"
		for i, v := range e.Violations {
			if i > 0 {
				msg += ";"
			}
			msg += " " + v.Rule + ": " + v.Message
		}
		return msg + ". Keep those rules at least as strict (GET /v1/organizations/" + e.Floor + "/policy shows them)."
	}
	msg := "The chart does not meet the admission policy of repository " + quote(e.Repository) + ":"
	for i, v := range e.Violations {
		if i > 0 {
			msg += ";"
		}
		msg += " " + v.Rule + ": " + v.Message
	}
	return msg + ". Fix the chart, or ask a maintainer of the repository to change its policy (chartctl repo policy get " + e.Repository + ")."
}

// Rules lists the violated rules' names in order.
func (e *PolicyViolation) Rules() []string {
	out := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		out[i] = v.Rule
	}
	return out
}

func quote(s string) string { return "\"" + s + "\"" }

// ScopedPolicy is the policy of one repository or organization, bound to
// it by ID (decision 2).
type ScopedPolicy struct {
	// Scope is PolicyRepository or PolicyOrganization.
	Scope string
	// ID is the repository's or organization's ID.
	ID     string
	Policy Policy
}

// PolicyStore keeps admission policies, bound to the ID of their
// repository or organization and deleted with it.
type PolicyStore interface {
	// Policy returns the policy of the repository or organization with
	// id; nil (and no error) if it set none.
	Policy(ctx context.Context, scope, id string) (*Policy, error)
	// SetPolicy replaces the policy; nil removes it. Returns ENOTFOUND if
	// no repository or organization has id.
	SetPolicy(ctx context.Context, scope, id string, p *Policy) error
	// Policies returns every stored policy.
	Policies(ctx context.Context) ([]ScopedPolicy, error)
	// SetVersionPolicy records p (nil clears it) on the version of repo
	// whose archive digest is digest. Returns ENOTFOUND if the version
	// does not exist or holds another archive by now (it was replaced
	// while being checked).
	SetVersionPolicy(ctx context.Context, repo, name, version, digest string, p *VersionPolicy) error
}

// PolicyVerification is what the admission policy needs to know of a
// version's signatures: the verdict the signature verifier computed. It
// is this package's own minimal shape, named apart from the verifier's
// Verification so both can live here; the verifier's result converts to
// it field by field.
type PolicyVerification struct {
	// Status is VerificationVerified, VerificationUnverified or
	// VerificationUnsigned.
	Status string
	// Signatures are the signatures found; Trust names the trust entry
	// that verified one ("" when none did).
	Signatures []PolicySignature
}

// PolicySignature is one signature of a PolicyVerification.
type PolicySignature struct {
	Kind, Identity, Trust string
}

// SatisfiesSignature reports whether v meets require (decision 19):
// SignatureNone (or "") always; SignatureAny when a signature verified;
// a trust name when a signature verified by that trust entry.
func SatisfiesSignature(require string, v PolicyVerification) bool {
	switch require {
	case "", SignatureNone:
		return true
	case SignatureAny:
		return v.Status == VerificationVerified
	}
	for _, s := range v.Signatures {
		if s.Trust == require {
			return true
		}
	}
	return false
}
