// Package trust verifies the signatures of a chart version against the
// trust material of its repository and organization (issue #30): Helm
// provenance files with Helm's provenance package (OpenPGP keyrings),
// cosign signatures with sigstore-go (bundles, key or keyless) and
// sigstore's signature package (the legacy `.sig` tag scheme), Notation
// signatures with notation-go (x509 trust stores, strict trust policy). It is
// verification as data in, verdict out, as sigstore-go's pkg/verify is:
// the application layer gathers the evidence and stores the verdict.
package trust

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sigstore/sigstore-go/pkg/root"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Formats of OCI signature artifacts (Artifact.Format).
const (
	// FormatCosignBundle is a Sigstore bundle attached as an OCI 1.1
	// referrer (cosign v3's default).
	FormatCosignBundle = "cosign-bundle"
	// FormatCosignSimpleSigning is cosign's legacy scheme: a manifest
	// tagged sha256-<hex>.sig whose layer is a simple-signing payload
	// with its signature in an annotation.
	FormatCosignSimpleSigning = "cosign-simple-signing"
	// FormatNotation is a Notation signature envelope (JWS or COSE)
	// attached as an OCI referrer.
	FormatNotation = "notation"
)

// Media and artifact types of signatures in OCI registries.
const (
	// MediaTypeSigstoreBundle is the artifactType of cosign's bundle
	// referrers (and the media type of their layer).
	MediaTypeSigstoreBundle = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// MediaTypeSimpleSigning is the layer media type of cosign's legacy
	// signatures.
	MediaTypeSimpleSigning = "application/vnd.dev.cosign.simplesigning.v1+json"
	// AnnotationCosignSignature holds a legacy signature, base64.
	AnnotationCosignSignature = "dev.cosignproject.cosign/signature"
	// ArtifactTypeNotation is the artifactType of Notation's signature
	// referrers (or their config's media type, on registries that
	// Notation treats as pre-OCI 1.1).
	ArtifactTypeNotation = "application/vnd.cncf.notary.signature"
	// MediaTypeNotationJWS and MediaTypeNotationCOSE are the layer media
	// types of Notation's signature envelopes.
	MediaTypeNotationJWS  = "application/jose+json"
	MediaTypeNotationCOSE = "application/cose"
)

// Evidence is what a chart version offers to be verified by.
type Evidence struct {
	// Archive is the chart archive, ArchiveName its file name as a
	// provenance file names it (NAME-VERSION.tgz).
	Archive     []byte
	ArchiveName string
	// Provenance is the version's .prov file, nil if none.
	Provenance []byte
	// Artifacts are the OCI signatures found for the version's manifests.
	Artifacts []Artifact
}

// Artifact is one OCI signature of a manifest of the version.
type Artifact struct {
	// Format is FormatCosignBundle, FormatCosignSimpleSigning or
	// FormatNotation.
	Format string
	// Subject is the digest of the manifest it signs ("sha256:<hex>").
	Subject string
	// Payload is the bundle JSON, or the simple-signing payload.
	Payload []byte
	// Signature is the base64 signature of a simple-signing payload.
	Signature string
	// MediaType is a Notation envelope's media type
	// (MediaTypeNotationJWS or MediaTypeNotationCOSE).
	MediaType string
	// Descriptor describes the signed manifest as a Notation signature
	// names it (media type, digest and size: the signature manifest's
	// subject); its digest must be Subject.
	Descriptor ocispec.Descriptor
}

// Options configure verification.
type Options struct {
	// TrustedRoot is the Sigstore trusted root keyless signatures are
	// verified against (serve --sigstore-trusted-root); nil: keyless
	// entries verify nothing.
	TrustedRoot root.TrustedMaterial
	// Now is the clock (VerifiedAt, CheckedAt).
	Now func() time.Time
	// HTTPClient fetches what Notation's revocation checks ask for (the
	// OCSP responders and CRLs signing certificates name); the server
	// gives its guarded upstream client. Nil: notation-go's defaults.
	HTTPClient *http.Client
}

// Verify checks every signature in ev against entries, in the order given
// (a repository's entries before its organization's, so a signature is
// credited to the nearest entry), and returns the verification record.
// It never fails: a signature that does not verify is listed with the
// reason.
func Verify(ev Evidence, entries []*chartctl.TrustEntry, opts Options) *chartctl.Verification {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	at := now().UTC()
	v := &chartctl.Verification{CheckedAt: at}
	add := func(kind string, try func(e *chartctl.TrustEntry) (identity string, ok bool, reason string)) {
		sig := chartctl.Signature{Kind: kind}
		reasons := map[string]bool{}
		for _, e := range entries {
			identity, ok, reason := try(e)
			if ok {
				sig.Identity, sig.Trust, sig.VerifiedAt, sig.Reason = identity, e.Name, &at, ""
				break
			}
			if reason != "" && !reasons[reason] {
				reasons[reason] = true
				if sig.Reason == "" {
					sig.Reason = reason
				}
			}
		}
		if sig.VerifiedAt == nil && sig.Reason == "" {
			sig.Reason = fmt.Sprintf("no %s trust material here", kindTrust(kind))
		}
		v.Signatures = append(v.Signatures, sig)
	}
	if len(ev.Provenance) > 0 {
		add(chartctl.SignatureProvenance, func(e *chartctl.TrustEntry) (string, bool, string) {
			if e.Kind != chartctl.TrustPGP {
				return "", false, ""
			}
			return verifyProvenance(e, ev.Archive, ev.ArchiveName, ev.Provenance)
		})
	}
	for _, a := range ev.Artifacts {
		if a.Format == FormatNotation {
			add(chartctl.SignatureNotation, func(e *chartctl.TrustEntry) (string, bool, string) {
				if e.Kind != chartctl.TrustNotation {
					return "", false, ""
				}
				return verifyNotation(e, a, opts.HTTPClient)
			})
			continue
		}
		add(chartctl.SignatureCosign, func(e *chartctl.TrustEntry) (string, bool, string) {
			switch {
			case a.Format == FormatCosignBundle && (e.Kind == chartctl.TrustCosignKey || e.Kind == chartctl.TrustCosignKeyless):
				return verifyBundle(e, a, opts.TrustedRoot, at)
			case a.Format == FormatCosignSimpleSigning && e.Kind == chartctl.TrustCosignKey:
				return verifySimpleSigning(e, a)
			}
			return "", false, ""
		})
	}
	// Verified signatures first, each group in a stable order, so the
	// record (and the index entry naming the signer) is the same on every
	// replica.
	sort.SliceStable(v.Signatures, func(i, j int) bool {
		return v.Signatures[i].Verified() && !v.Signatures[j].Verified()
	})
	switch {
	case len(v.Signatures) == 0:
		v.Status = chartctl.VerificationUnsigned
	case v.Signatures[0].Verified():
		v.Status = chartctl.VerificationVerified
	default:
		v.Status = chartctl.VerificationUnverified
	}
	return v
}

// kindTrust names the trust kinds a signature kind is checked against.
func kindTrust(kind string) string {
	switch kind {
	case chartctl.SignatureProvenance:
		return "pgp"
	case chartctl.SignatureCosign:
		return "cosign-key or cosign-keyless"
	case chartctl.SignatureNotation:
		return "notation"
	}
	return kind
}
