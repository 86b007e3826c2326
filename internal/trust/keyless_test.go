package trust_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/root"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/trust"
)

// mustTrustedRoot reads a trusted root the way the serve command does:
// from its JSON.
func mustTrustedRoot(t *testing.T, s *testkit.Sigstore) root.TrustedMaterial {
	t.Helper()
	tr, err := root.NewTrustedRootFromJSON(s.TrustedRootJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestKeylessAgainstTrustedRoot signs a manifest with sigstore-go's
// virtual Sigstore (Fulcio certificate, Rekor entry, timestamp) and
// verifies the bundle against a keyless identity: it verifies against
// that Sigstore's trusted root read from JSON, names the certificate's
// identity, and does not verify for another subject or issuer, against
// another Sigstore's root, or with no root configured (saying so).
func TestKeylessAgainstTrustedRoot(t *testing.T) {
	const issuer = "https://token.actions.githubusercontent.com"
	const identity = "https://github.com/acme/charts/.github/workflows/release.yml@refs/heads/main"
	ss := testkit.NewSigstore(t)
	manifest := []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json"}`)
	sum := sha256.Sum256(manifest)
	subject := "sha256:" + hex.EncodeToString(sum[:])
	ev := trust.Evidence{Artifacts: []trust.Artifact{{Format: trust.FormatCosignBundle, Subject: subject,
		Payload: ss.SignBundle(t, identity, issuer, manifest)}}}
	entry := func(issuer, subject string) []*chartctl.TrustEntry {
		return []*chartctl.TrustEntry{{Name: "ci", Kind: chartctl.TrustCosignKeyless, Issuer: issuer, Subject: subject}}
	}

	v := trust.Verify(ev, entry(issuer, `https://github\.com/acme/charts/.*`), trust.Options{TrustedRoot: mustTrustedRoot(t, ss)})
	if v.Status != chartctl.VerificationVerified || v.Signatures[0].Identity != identity || v.Signatures[0].Trust != "ci" || v.Signatures[0].Kind != chartctl.SignatureCosign {
		t.Fatalf("keyless against its trusted root: %+v", v)
	}

	for name, c := range map[string]struct {
		entries []*chartctl.TrustEntry
		root    root.TrustedMaterial
		reason  string
	}{
		"other subject":  {entry(issuer, `https://github\.com/other/.*`), mustTrustedRoot(t, ss), "cosign keyless"},
		"partial match":  {entry(issuer, `https://github\.com/acme`), mustTrustedRoot(t, ss), "cosign keyless"},
		"other issuer":   {entry("https://accounts.google.com", `.*`), mustTrustedRoot(t, ss), "cosign keyless"},
		"other sigstore": {entry(issuer, `.*`), mustTrustedRoot(t, testkit.NewSigstore(t)), "cosign keyless"},
		"no root":        {entry(issuer, `.*`), nil, "no Sigstore trusted root is configured"},
	} {
		t.Run(name, func(t *testing.T) {
			v := trust.Verify(ev, c.entries, trust.Options{TrustedRoot: c.root})
			if v.Status != chartctl.VerificationUnverified || len(v.Signatures) != 1 || v.Signatures[0].Verified() {
				t.Fatalf("verified: %+v", v)
			}
			if !strings.Contains(v.Signatures[0].Reason, c.reason) {
				t.Fatalf("reason %q does not say %q", v.Signatures[0].Reason, c.reason)
			}
		})
	}

	// A bundle over other bytes does not sign this manifest.
	other := trust.Evidence{Artifacts: []trust.Artifact{{Format: trust.FormatCosignBundle, Subject: subject,
		Payload: ss.SignBundle(t, identity, issuer, []byte("another manifest"))}}}
	if v := trust.Verify(other, entry(issuer, `.*`), trust.Options{TrustedRoot: mustTrustedRoot(t, ss)}); v.Status != chartctl.VerificationUnverified {
		t.Fatalf("a bundle of other bytes verified: %+v", v)
	}
}
