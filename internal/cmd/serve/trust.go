package serve

import (
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/netguard"
)

// LoadTrustedRoot reads the Sigstore trusted root of
// --sigstore-trusted-root with sigstore-go; "" gives nil (no keyless
// verification). A file that is missing or is not a trusted root stops
// the start, saying which and how to make one.
func LoadTrustedRoot(path string) (root.TrustedMaterial, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read --sigstore-trusted-root: %w", err)
	}
	tr, err := root.NewTrustedRootFromJSON(b)
	if err != nil {
		return nil, fmt.Errorf("--sigstore-trusted-root %s is not a Sigstore trusted root (%v): give the trusted_root.json of your Sigstore, e.g. written by `cosign trusted-root create`", path, err)
	}
	if len(tr.FulcioCertificateAuthorities()) == 0 {
		return nil, fmt.Errorf("--sigstore-trusted-root %s names no certificate authority, so no keyless signature could verify: add your Fulcio's certificate chain to it", path)
	}
	return tr, nil
}

// revocationTimeout bounds one OCSP or CRL fetch of a Notation
// verification.
const revocationTimeout = 5 * time.Second

// signatureTrust is the verification side of the application layer: the
// trusted root, and a client for the revocation checks of Notation
// signatures. The OCSP responders and CRLs are named by the signing
// certificates, so by whoever made them: the client is netguarded under
// --allow-private-upstreams, as every user-chosen fetch is.
func signatureTrust(cfg *Config, trustedRoot root.TrustedMaterial) app.Trust {
	return app.Trust{
		TrustedRoot: trustedRoot,
		HTTPClient: &http.Client{Timeout: revocationTimeout,
			Transport: netguard.Upstream(revocationTimeout, cfg.AllowPrivateUpstreams.All, app.FlagAllowPrivateUpstreams)},
	}
}
