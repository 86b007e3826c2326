package trust

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// ParseCosignKey reads a cosign public key (PEM) into a verifier.
func ParseCosignKey(pemKey []byte) (signature.Verifier, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pemKey)
	if err != nil {
		return nil, err
	}
	return signature.LoadDefaultVerifier(pub)
}

// digestBytes splits "sha256:<hex>" into algorithm and bytes.
func digestBytes(d string) (string, []byte, error) {
	alg, h, ok := strings.Cut(d, ":")
	if !ok {
		return "", nil, fmt.Errorf("malformed digest %q", d)
	}
	b, err := hex.DecodeString(h)
	return alg, b, err
}

// verifyBundle checks a Sigstore bundle that signs the manifest a.Subject
// with sigstore-go: against the entry's public key (cosign-key), or
// against the trusted root and the entry's issuer and subject
// (cosign-keyless).
func verifyBundle(e *chartctl.TrustEntry, a Artifact, trustedRoot root.TrustedMaterial, now time.Time) (string, bool, string) {
	var b bundle.Bundle
	if err := b.UnmarshalJSON(a.Payload); err != nil {
		return "", false, "cosign bundle: " + err.Error()
	}
	return VerifyEntity(e, &b, a.Subject, trustedRoot, now)
}

// VerifyEntity checks a signed entity (a bundle) that signs the artifact
// with digest subject against the entry, as verifyBundle does. It is
// exported for the keyless tests, which sign with sigstore-go's virtual
// Sigstore.
func VerifyEntity(e *chartctl.TrustEntry, entity verify.SignedEntity, subject string, trustedRoot root.TrustedMaterial, now time.Time) (string, bool, string) {
	alg, sum, err := digestBytes(subject)
	if err != nil {
		return "", false, err.Error()
	}
	artifact := verify.WithArtifactDigest(alg, sum)
	switch e.Kind {
	case chartctl.TrustCosignKey:
		v, err := ParseCosignKey(e.Key)
		if err != nil {
			return "", false, fmt.Sprintf("trust entry %q holds no usable public key: %v", e.Name, err)
		}
		// A key has no validity period of its own; signed offline
		// (--tlog-upload=false), a bundle carries no timestamp, so the
		// key is checked at the current time, as `cosign verify
		// --insecure-ignore-tlog` does.
		material := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
			return root.NewExpiringKey(v, time.Time{}, time.Time{}), nil
		})
		verifier, err := verify.NewVerifier(material, verify.WithCurrentTime())
		if err != nil {
			return "", false, err.Error()
		}
		if _, err := verifier.Verify(entity, verify.NewPolicy(artifact, verify.WithKey())); err != nil {
			return "", false, "cosign bundle: " + err.Error()
		}
		return e.Name, true, ""
	case chartctl.TrustCosignKeyless:
		if trustedRoot == nil {
			return "", false, "no Sigstore trusted root is configured on this server, so keyless signatures cannot be verified: start it with --sigstore-trusted-root FILE"
		}
		id, err := verify.NewShortCertificateIdentity(e.Issuer, "", "", "^(?:"+e.Subject+")$")
		if err != nil {
			return "", false, err.Error()
		}
		verifier, err := verify.NewVerifier(trustedRoot, verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1))
		if err != nil {
			return "", false, err.Error()
		}
		res, err := verifier.Verify(entity, verify.NewPolicy(artifact, verify.WithCertificateIdentity(id)))
		if err != nil {
			return "", false, "cosign keyless: " + err.Error()
		}
		if res.Signature != nil && res.Signature.Certificate != nil {
			return res.Signature.Certificate.SubjectAlternativeName, true, ""
		}
		return e.Subject, true, ""
	}
	return "", false, ""
}

// verifySimpleSigning checks a legacy cosign signature: the signature over
// the simple-signing payload with the entry's key (sigstore's signature
// package), and the payload naming the signed manifest.
func verifySimpleSigning(e *chartctl.TrustEntry, a Artifact) (string, bool, string) {
	v, err := ParseCosignKey(e.Key)
	if err != nil {
		return "", false, fmt.Sprintf("trust entry %q holds no usable public key: %v", e.Name, err)
	}
	sig, err := base64.StdEncoding.DecodeString(a.Signature)
	if err != nil {
		return "", false, "cosign signature: not base64"
	}
	if err := v.VerifySignature(bytes.NewReader(sig), bytes.NewReader(a.Payload)); err != nil {
		return "", false, "cosign signature: " + err.Error()
	}
	var p payload.SimpleContainerImage
	if err := json.Unmarshal(a.Payload, &p); err != nil {
		return "", false, "cosign payload: " + err.Error()
	}
	if p.Critical.Image.DockerManifestDigest != a.Subject {
		return "", false, fmt.Sprintf("cosign payload signs %s, not %s", p.Critical.Image.DockerManifestDigest, a.Subject)
	}
	return e.Name, true, ""
}
