package chartctl

import (
	"context"
	"regexp"
	"strings"
	"time"
)

// This file holds the domain of signature verification (issue #30, CONTRACT
// §18 "Trust and admission"): the trust material an organization or a
// repository accepts signatures from, and the verification record every
// chart version carries.

// Kinds of trust material (TrustEntry.Kind), as the wire names them.
const (
	// TrustPGP is an OpenPGP public keyring (armored or binary) that
	// Helm provenance files are checked against.
	TrustPGP = "pgp"
	// TrustCosignKey is a cosign public key (PEM).
	TrustCosignKey = "cosign-key"
	// TrustCosignKeyless is a cosign keyless identity: the OIDC issuer
	// and a regular expression the certificate's subject must match,
	// checked against the server's Sigstore trusted root.
	TrustCosignKeyless = "cosign-keyless"
	// TrustNotation is a Notation trust store: x509 root certificates
	// (PEM) that signing certificates must chain to.
	TrustNotation = "notation"
)

// TrustKinds lists every kind of trust material.
var TrustKinds = []string{TrustPGP, TrustCosignKey, TrustCosignKeyless, TrustNotation}

// Scopes of trust material (TrustEntry.Scope).
const (
	TrustScopeRepository   = "repository"
	TrustScopeOrganization = "organization"
)

// Reserved trust names: a policy's require_signature uses them for "no
// signature required" and "any trusted signature" (CONTRACT §18 decision
// 19), so no entry may be named so.
const (
	TrustNameNone = "none"
	TrustNameAny  = "any"
)

// TrustEntry is one piece of trust material of a repository or an
// organization, bound to its ID and deleted with it (decision 2).
type TrustEntry struct {
	ID string
	// Scope is TrustScopeRepository or TrustScopeOrganization; ScopeID is
	// that repository's or organization's ID.
	Scope   string
	ScopeID string
	// Name is unique within its scope.
	Name string
	// Kind is one of TrustKinds.
	Kind string
	// Key is the material as given: an armored or binary keyring (pgp),
	// a PEM public key (cosign-key) or PEM certificates (notation).
	Key []byte
	// Issuer and Subject identify keyless signers (cosign-keyless):
	// the OIDC issuer URL, exactly, and a regular expression the
	// certificate's subject (SAN) must match in full. A notation entry's
	// Subject, when set, is its trust policy's trusted identity: an x509
	// distinguished name the signing certificate's subject must include
	// (Notation's "x509.subject:"); empty trusts every signer the
	// certificates certify.
	Issuer    string
	Subject   string
	CreatedBy string
	CreatedAt time.Time
}

// Validate checks a new entry's name, kind and the fields its kind needs;
// it does not parse Key (the verifiers do). Returns EINVALID naming the
// offending parameter.
func (e *TrustEntry) Validate() error {
	if err := ValidateName("name", e.Name); err != nil {
		return err
	}
	if e.Name == TrustNameNone || e.Name == TrustNameAny {
		return Invalid("name", "The trust names %q and %q are reserved for policies; choose another name.", TrustNameNone, TrustNameAny)
	}
	switch e.Kind {
	case TrustPGP, TrustCosignKey, TrustNotation:
		if len(e.Key) == 0 {
			return Invalid("key", "A %s trust entry needs its key material in \"key\".", e.Kind)
		}
		// A notation entry may name the trusted identity of its
		// signers (Notation's x509.subject); the verifier parses it.
		if e.Issuer != "" || (e.Subject != "" && e.Kind != TrustNotation) {
			return Invalid("issuer", "Only cosign-keyless entries take an issuer and subject (notation entries: a subject alone).")
		}
	case TrustCosignKeyless:
		if len(e.Key) != 0 {
			return Invalid("key", "A cosign-keyless entry takes an issuer and subject, not a key.")
		}
		if !strings.HasPrefix(e.Issuer, "https://") && !strings.HasPrefix(e.Issuer, "http://") {
			return Invalid("issuer", "A cosign-keyless entry needs the signer's OIDC issuer URL in \"issuer\".")
		}
		if e.Subject == "" {
			return Invalid("subject", "A cosign-keyless entry needs a regular expression for the signer's identity in \"subject\".")
		}
		if _, err := e.SubjectRegexp(); err != nil {
			return Invalid("subject", "Invalid subject regular expression: %v.", err)
		}
	default:
		return Invalid("kind", "Unknown trust kind %q: use one of %s.", e.Kind, strings.Join(TrustKinds, ", "))
	}
	return nil
}

// SubjectRegexp compiles Subject anchored at both ends, so it must match a
// signer's identity in full (as cosign's --certificate-identity-regexp is
// commonly written with ^…$).
func (e *TrustEntry) SubjectRegexp() (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + e.Subject + `)$`)
}

// Verification statuses (Verification.Status).
const (
	// VerificationVerified: at least one signature verified against the
	// trust material of the version's repository or organization.
	VerificationVerified = "verified"
	// VerificationUnverified: signatures exist, none verified.
	VerificationUnverified = "unverified"
	// VerificationUnsigned: no signature was found.
	VerificationUnsigned = "unsigned"
)

// Signature kinds (Signature.Kind).
const (
	SignatureProvenance = "pgp"
	SignatureCosign     = "cosign"
	SignatureNotation   = "notation"
)

// Verification is a chart version's verification record: the signatures
// found for it and which of them verified.
type Verification struct {
	// Status is VerificationVerified, VerificationUnverified or
	// VerificationUnsigned.
	Status string
	// Signatures lists every signature found, verified ones first.
	Signatures []Signature
	// CheckedAt is when the record was computed.
	CheckedAt time.Time
}

// Signature is one signature of a chart version.
type Signature struct {
	// Kind is SignatureProvenance, SignatureCosign or SignatureNotation.
	Kind string
	// Identity names the signer: a PGP user ID, a key's fingerprint, a
	// keyless certificate's subject, an x509 subject; "" when unknown.
	Identity string
	// Trust names the trust entry that verified it, "" if none did.
	Trust string
	// VerifiedAt is when it verified, nil if it did not.
	VerifiedAt *time.Time
	// Reason says why it did not verify (for people and the log).
	Reason string
}

// Verified reports whether the signature verified.
func (s Signature) Verified() bool { return s.VerifiedAt != nil }

// SignedBy returns the identity of the first verified signature, "" when
// none verified.
func (v *Verification) SignedBy() string {
	if v == nil {
		return ""
	}
	for _, s := range v.Signatures {
		if s.Verified() {
			return s.Identity
		}
	}
	return ""
}

// TrustStore keeps trust material and chart versions' verification
// records.
type TrustStore interface {
	// AddTrustEntry stores e, filling ID and CreatedAt when empty.
	// Returns ENOTFOUND if its repository or organization (by ID) does
	// not exist, ECONFLICT if its scope has an entry of that name.
	AddTrustEntry(ctx context.Context, e *TrustEntry) error
	// TrustEntries returns the entries of one repository or organization
	// (by ID), by name.
	TrustEntries(ctx context.Context, scope, scopeID string) ([]*TrustEntry, error)
	// DeleteTrustEntry deletes one entry. Returns ENOTFOUND.
	DeleteTrustEntry(ctx context.Context, scope, scopeID, name string) error
	// SetVerification records v for the version of repo whose archive
	// digest is digest, and replaces its Helm index entry with
	// indexEntry when that is not empty (the entry names the verified
	// signer), with indexJSON as its IndexEntryJSON. Returns ENOTFOUND if
	// the version does not exist or holds another archive by now (it was
	// replaced while being verified).
	SetVerification(ctx context.Context, repo, name, version, digest string, v *Verification, indexEntry, indexJSON []byte) error
	// ReleaseChartVersion ends the hold of the version of repo whose
	// archive digest is digest: it clears HeldUntil and stores indexEntry
	// as its Helm index entry (indexJSON as its IndexEntryJSON), so it is
	// listed, indexed and tagged from
	// then on. Returns ENOTFOUND if the version does not exist or holds
	// another archive, ECONFLICT if it is not held (another caller
	// released it first).
	ReleaseChartVersion(ctx context.Context, repo, name, version, digest string, indexEntry, indexJSON []byte) error
	// HeldChartVersions returns every held version of every repository
	// whose HeldUntil is at or before before, oldest deadline first.
	HeldChartVersions(ctx context.Context, before time.Time) ([]*ChartVersion, error)
	// ExpireHeldChartVersion deletes the version if it is still held and
	// its HeldUntil is at or before now, as DeleteChartVersion does, and
	// returns it with the blob digests no record refers to any more.
	// Returns ENOTFOUND if it does not exist, ECONFLICT if it is not held
	// or its hold has not ended (it was released meanwhile).
	ExpireHeldChartVersion(ctx context.Context, repo, name, version string, now time.Time) (*ChartVersion, []string, error)
}
