package trust_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/notaryproject/notation-go"
	"github.com/notaryproject/notation-go/signer"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/trust"
)

// notationCA is a CA and a code-signing certificate it issued, as a
// Notation signer holds them.
type notationCA struct {
	rootPEM []byte
	leafKey *ecdsa.PrivateKey
	chain   []*x509.Certificate
}

func mustNotationCA(t *testing.T, cn string) *notationCA {
	t.Helper()
	rootKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	rootTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn + " root", Organization: []string{"Acme"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	rootDER, err := x509.CreateCertificate(rand.Reader, rootTmpl, rootTmpl, &rootKey.PublicKey, rootKey)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := x509.ParseCertificate(rootDER)
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn, Organization: []string{"Acme"}, Province: []string{"WA"}, Country: []string{"US"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(12 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, root, &leafKey.PublicKey, rootKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(leafDER)
	return &notationCA{rootPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rootDER}), leafKey: leafKey, chain: []*x509.Certificate{leaf, root}}
}

// sign makes a Notation signature envelope of desc with notation-go's
// own signer, as `notation sign` does.
func (c *notationCA) sign(t *testing.T, desc ocispec.Descriptor, mediaType string) []byte {
	t.Helper()
	s, err := signer.NewGenericSigner(c.leafKey, c.chain)
	if err != nil {
		t.Fatal(err)
	}
	env, _, err := s.Sign(context.Background(), desc, notation.SignerSignOptions{SignatureMediaType: mediaType})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// TestNotationVerification: a Notation signature (JWS or COSE) by a
// certificate chaining to a notation entry's roots verifies under the
// strict level and names the signer's subject; one by another CA, one
// describing another manifest, a tampered envelope, and an envelope with
// no notation entry do not, each saying why.
func TestNotationVerification(t *testing.T) {
	acme := mustNotationCA(t, "acme-release")
	desc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromString("chart manifest"), Size: 580}
	entries := []*chartctl.TrustEntry{{Name: "notary", Kind: chartctl.TrustNotation, Key: acme.rootPEM}}
	artifact := func(env []byte, mediaType string, d ocispec.Descriptor) trust.Evidence {
		return trust.Evidence{Artifacts: []trust.Artifact{{Format: trust.FormatNotation, Subject: desc.Digest.String(),
			Payload: env, MediaType: mediaType, Descriptor: d}}}
	}

	for _, mt := range []string{trust.MediaTypeNotationJWS, trust.MediaTypeNotationCOSE} {
		v := trust.Verify(artifact(acme.sign(t, desc, mt), mt, desc), entries, trust.Options{})
		if v.Status != chartctl.VerificationVerified || v.Signatures[0].Kind != chartctl.SignatureNotation || v.Signatures[0].Trust != "notary" ||
			!strings.Contains(v.Signatures[0].Identity, "CN=acme-release") {
			t.Fatalf("%s: %+v", mt, v)
		}
	}

	other := desc
	other.Digest = digest.FromString("another manifest")
	jws := acme.sign(t, desc, trust.MediaTypeNotationJWS)
	tampered := []byte(strings.Replace(string(jws), `"payload":"`, `"payload":"x`, 1))
	for name, c := range map[string]struct {
		ev      trust.Evidence
		entries []*chartctl.TrustEntry
		reason  string
	}{
		"another CA":          {artifact(mustNotationCA(t, "stranger").sign(t, desc, trust.MediaTypeNotationJWS), trust.MediaTypeNotationJWS, desc), entries, "notation"},
		"another manifest":    {artifact(acme.sign(t, other, trust.MediaTypeNotationJWS), trust.MediaTypeNotationJWS, desc), entries, "notation"},
		"descriptor mismatch": {artifact(jws, trust.MediaTypeNotationJWS, other), entries, "describes"},
		"tampered":            {artifact(tampered, trust.MediaTypeNotationJWS, desc), entries, "notation"},
		"no notation entry":   {artifact(jws, trust.MediaTypeNotationJWS, desc), []*chartctl.TrustEntry{{Name: "k", Kind: chartctl.TrustCosignKey, Key: []byte("x")}}, "no notation trust material"},
	} {
		t.Run(name, func(t *testing.T) {
			v := trust.Verify(c.ev, c.entries, trust.Options{})
			if v.Status != chartctl.VerificationUnverified || len(v.Signatures) != 1 || v.Signatures[0].Verified() || v.Signatures[0].Kind != chartctl.SignatureNotation {
				t.Fatalf("verified: %+v", v)
			}
			if !strings.Contains(v.Signatures[0].Reason, c.reason) {
				t.Fatalf("reason %q does not say %q", v.Signatures[0].Reason, c.reason)
			}
		})
	}
}

// TestNotationTrustedIdentity: a notation entry's subject is its trust
// policy's trusted identity (Notation's x509.subject, matched as a subset
// of the signing certificate's subject); one Notation refuses is refused
// when the entry is checked.
func TestNotationTrustedIdentity(t *testing.T) {
	acme := mustNotationCA(t, "acme-release")
	desc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromString("chart manifest"), Size: 580}
	ev := trust.Evidence{Artifacts: []trust.Artifact{{Format: trust.FormatNotation, Subject: desc.Digest.String(),
		Payload: acme.sign(t, desc, trust.MediaTypeNotationJWS), MediaType: trust.MediaTypeNotationJWS, Descriptor: desc}}}
	verify := func(subject string) *chartctl.Verification {
		return trust.Verify(ev, []*chartctl.TrustEntry{{Name: "notary", Kind: chartctl.TrustNotation, Key: acme.rootPEM, Subject: subject}}, trust.Options{})
	}
	for _, subject := range []string{"C=US, ST=WA, O=Acme", "C=US, ST=WA, O=Acme, CN=acme-release"} {
		if v := verify(subject); v.Status != chartctl.VerificationVerified {
			t.Errorf("identity %q: %+v", subject, v)
		}
	}
	if v := verify("C=US, ST=WA, O=Other"); v.Status != chartctl.VerificationUnverified || !strings.Contains(v.Signatures[0].Reason, "trusted identities") {
		t.Errorf("another organization's identity verified: %+v", v)
	}
	if err := trust.CheckNotationSubject("notary", "O=Acme"); err == nil {
		t.Error("an identity without C and ST was accepted")
	}
	if err := trust.CheckNotationSubject("notary", "C=US, ST=WA, O=Acme"); err != nil {
		t.Error(err)
	}
}
