package trust

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"

	"github.com/notaryproject/notation-core-go/revocation"
	crlutil "github.com/notaryproject/notation-core-go/revocation/crl"
	"github.com/notaryproject/notation-core-go/revocation/purpose"
	"github.com/notaryproject/notation-go"
	"github.com/notaryproject/notation-go/verifier"
	"github.com/notaryproject/notation-go/verifier/trustpolicy"
	"github.com/notaryproject/notation-go/verifier/truststore"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// ParseNotationCerts reads the PEM x509 certificates of a notation trust
// entry (its trust store: the roots signing certificates chain to).
func ParseNotationCerts(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	rest := data
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM certificate found")
	}
	return certs, nil
}

// entryTrustStore is a Notation trust store of one trust entry: its
// certificates are the "ca" store named after the entry, as `notation cert
// add --type ca --store NAME` would hold them.
type entryTrustStore struct {
	name  string
	certs []*x509.Certificate
}

// GetCertificates implements truststore.X509TrustStore.
func (s entryTrustStore) GetCertificates(_ context.Context, storeType truststore.Type, namedStore string) ([]*x509.Certificate, error) {
	if storeType != truststore.TypeCA || namedStore != s.name {
		return nil, truststore.TrustStoreError{Msg: fmt.Sprintf("the trust store %q of type %q does not exist", namedStore, storeType)}
	}
	return s.certs, nil
}

// notationPolicy is the Notation trust policy of one entry: its
// certificates as the "ca" trust store named after it, the strict level,
// and as trusted identity the entry's subject (an x509 distinguished name
// the signing certificate's subject must include), or every identity.
func notationPolicy(name, subject string) *trustpolicy.Document {
	identity := "*"
	if subject != "" {
		identity = "x509.subject: " + subject
	}
	return &trustpolicy.Document{
		Version: "1.0",
		TrustPolicies: []trustpolicy.TrustPolicy{{
			Name:                  "chartctl",
			RegistryScopes:        []string{"*"},
			SignatureVerification: trustpolicy.SignatureVerification{VerificationLevel: trustpolicy.LevelStrict.Name},
			TrustStores:           []string{string(truststore.TypeCA) + ":" + name},
			TrustedIdentities:     []string{identity},
		}},
	}
}

// CheckNotationSubject checks a notation entry's trusted identity as
// Notation's trust policy validation does (a distinguished name with at
// least C, ST and O, e.g. "C=US, ST=WA, O=Acme, CN=release"); "" is
// every identity.
func CheckNotationSubject(name, subject string) error {
	if subject == "" {
		return nil
	}
	return notationPolicy(name, subject).Validate()
}

// notationReference is the artifact reference handed to notation-go: it
// only selects a trust policy statement by registry scope, and the one
// statement here applies to every scope ("*"), so any well-formed
// reference naming the signed digest will do.
func notationReference(subject string) string {
	return "chartctl.invalid/chart@" + subject
}

// verifyNotation checks a Notation signature envelope against a notation
// entry with notation-go, under the entry's trust policy of one statement
// (notationPolicy: its certificates, its trusted identity, the strict
// verification level (integrity, authenticity,
// authentic timestamp, expiry and revocation all enforced)). The envelope
// must sign the manifest a.Descriptor describes.
func verifyNotation(e *chartctl.TrustEntry, a Artifact, httpClient *http.Client) (string, bool, string) {
	certs, err := ParseNotationCerts(e.Key)
	if err != nil {
		return "", false, fmt.Sprintf("trust entry %q holds no usable certificates: %v", e.Name, err)
	}
	policy := notationPolicy(e.Name, e.Subject)
	opts := verifier.VerifierOptions{}
	if httpClient != nil {
		// Revocation is checked at the OCSP and CRL addresses the
		// signer's certificates name: chosen by whoever made them, so
		// they are fetched through the server's guarded client.
		fetcher, err := crlutil.NewHTTPFetcher(httpClient)
		if err != nil {
			return "", false, err.Error()
		}
		for _, p := range []struct {
			purpose purpose.Purpose
			set     *revocation.Validator
		}{{purpose.CodeSigning, &opts.RevocationCodeSigningValidator}, {purpose.Timestamping, &opts.RevocationTimestampingValidator}} {
			v, err := revocation.NewWithOptions(revocation.Options{OCSPHTTPClient: httpClient, CRLFetcher: fetcher, CertChainPurpose: p.purpose})
			if err != nil {
				return "", false, err.Error()
			}
			*p.set = v
		}
	}
	v, err := verifier.NewWithOptions(policy, entryTrustStore{name: e.Name, certs: certs}, nil, opts)
	if err != nil {
		return "", false, "notation: " + err.Error()
	}
	if a.Descriptor.Digest.String() != a.Subject {
		return "", false, fmt.Sprintf("notation signature describes %s, not %s", a.Descriptor.Digest, a.Subject)
	}
	outcome, err := v.Verify(context.Background(), a.Descriptor, a.Payload, notation.VerifierVerifyOptions{
		ArtifactReference:  notationReference(a.Subject),
		SignatureMediaType: a.MediaType,
	})
	if err != nil {
		return "", false, "notation: " + err.Error()
	}
	if outcome.EnvelopeContent == nil || len(outcome.EnvelopeContent.SignerInfo.CertificateChain) == 0 {
		return "", false, "notation: the signature carries no certificate"
	}
	return outcome.EnvelopeContent.SignerInfo.CertificateChain[0].Subject.String(), true, ""
}
