package client

import (
	"testing"
	"time"
)

// TestVerdictSummaries: the one-line verdicts chart view and the TUI
// show, for every verification status and policy verdict.
func TestVerdictSummaries(t *testing.T) {
	at := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		v    *Verification
		want string
	}{
		{nil, "Not signed"},
		{&Verification{Status: "unsigned", Signatures: []Signature{}}, "Not signed"},
		{&Verification{Status: "verified", Signatures: []Signature{{Kind: "pgp", Identity: "Release Bot <release@example.com>", Trust: "release", VerifiedAt: &at}}},
			"Signed by Release Bot <release@example.com>, verified"},
		{&Verification{Status: "verified", Signatures: []Signature{{Kind: "cosign", Reason: "bad"}, {Kind: "cosign", Trust: "ci-key", VerifiedAt: &at}}},
			"Signed by trust entry ci-key, verified"},
		{&Verification{Status: "unverified", Signatures: []Signature{{Kind: "pgp", Reason: "no pgp trust material here"}}},
			"Signature not verified (no pgp trust material here)"},
		{&Verification{Status: "unverified", Signatures: []Signature{{Kind: "cosign"}, {Kind: "notation"}}},
			"Signatures not verified (no trust entry of the repository or its organization verifies it)"},
	} {
		if got := c.v.Summary(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.v, got, c.want)
		}
	}
	for _, c := range []struct {
		p    *VersionPolicy
		want string
	}{
		{nil, "ok"},
		{&VersionPolicy{Status: "ok", Findings: []Finding{}}, "ok"},
		{&VersionPolicy{Status: "ok", Findings: []Finding{{Rule: "lint", Severity: "warning", Message: "icon"}}}, "ok, 1 warning"},
		{&VersionPolicy{Status: "ok", Findings: []Finding{{Rule: "lint", Severity: "warning"}, {Rule: "lint", Severity: "warning"}}}, "ok, 2 warnings"},
		{&VersionPolicy{Status: "held", Findings: []Finding{}}, "held: waiting for the signature its policy requires"},
		{&VersionPolicy{Status: "noncompliant", Findings: []Finding{{Rule: "required_fields", Severity: "error"}, {Rule: "lint", Severity: "warning"},
			{Rule: "deny_files", Severity: "error"}, {Rule: "required_fields", Severity: "error"}}}, "noncompliant: breaks required_fields, deny_files"},
	} {
		if got := c.p.Summary(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
}
