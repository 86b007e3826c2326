package app

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sigstore/sigstore-go/pkg/root"
	"golang.org/x/sync/errgroup"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/helmindex"
	"github.com/chartctl/chartctl/internal/trust"
)

// This file holds trust material and signature verification (issue #30,
// CONTRACT §18 "Trust and admission"): the pgp keyrings, cosign keys and
// keyless identities a repository or an organization accepts signatures
// from, and each chart version's verification record, recomputed when a
// signature arrives after the chart and when trust material changes.

// TrustScope names the repository or the organization trust material
// belongs to: exactly one of the two is set.
type TrustScope struct {
	Repository   string
	Organization string
}

// TrustSpec is what a new trust entry says (chartctl.TrustEntry's fields).
type TrustSpec struct {
	Kind    string
	Name    string
	Key     []byte
	Issuer  string
	Subject string
}

// Trust is the verification side of App: set by the serve command.
type Trust struct {
	// TrustedRoot is the Sigstore trusted root keyless signatures are
	// verified against (serve --sigstore-trusted-root); nil: keyless
	// entries verify nothing, and saying so is each signature's reason.
	TrustedRoot root.TrustedMaterial
	// HTTPClient fetches the revocation information (OCSP, CRLs) that
	// Notation's strict verification asks for at the addresses signing
	// certificates name: the serve command gives a netguard client. Nil:
	// notation-go's own default clients.
	HTTPClient *http.Client
}

// trustOptions are the options every verification runs with.
func (a *App) trustOptions() trust.Options {
	return trust.Options{TrustedRoot: a.Trust.TrustedRoot, Now: a.Now, HTTPClient: a.Trust.HTTPClient}
}

// trustTarget is a resolved TrustScope.
type trustTarget struct {
	scope, id, org string
	repo           *chartctl.Repository
}

func (t *trustTarget) path() string {
	if t.repo != nil {
		return repoPath(t.repo.Name) + "/trust"
	}
	return "/v1/organizations/" + t.org + "/trust"
}

func (t *trustTarget) name() string {
	if t.repo != nil {
		return t.repo.Name
	}
	return t.org
}

// trustTargetFor resolves s for p: reading needs read access to the
// repository (or to see the organization); changing needs the repository's
// maintain role (SettingsRole), or the maintainer role in the
// organization (decision 4: maintainers maintain its repositories), by a
// person.
func (a *App) trustTargetFor(ctx context.Context, p *chartctl.Principal, s TrustScope, write bool) (*trustTarget, error) {
	switch {
	case (s.Repository == "") == (s.Organization == ""):
		return nil, chartctl.Invalid("repository", "Name either a repository or an organization.")
	case s.Repository != "":
		var (
			r   *chartctl.Repository
			err error
		)
		if write {
			if err := RequireHuman(p, "change trust material"); err != nil {
				return nil, err
			}
			r, err = a.WritableRepo(ctx, p, s.Repository, SettingsRole)
		} else {
			r, err = a.ReadableRepo(ctx, p, s.Repository)
		}
		if err != nil {
			return nil, err
		}
		return &trustTarget{scope: chartctl.TrustScopeRepository, id: r.ID, org: r.Organization, repo: r}, nil
	}
	if p == nil {
		return nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "Authentication required.")
	}
	scope := chartctl.ScopeOrgRead
	if write {
		scope = chartctl.ScopeOrgWrite
	}
	if !p.Scopes.Allows(scope) {
		return nil, chartctl.ScopeRequired(scope)
	}
	o, err := a.VisibleOrg(ctx, p, s.Organization)
	if err != nil {
		return nil, err
	}
	if write {
		if err := RequireHuman(p, "change trust material"); err != nil {
			return nil, err
		}
		if !p.OrgRole(o.Name).AtLeast(chartctl.RoleMaintainer) {
			return nil, chartctl.Errorf(chartctl.EFORBIDDEN, "Changing the trust material of organization %q needs the maintainer or owner role there.", o.Name)
		}
	}
	return &trustTarget{scope: chartctl.TrustScopeOrganization, id: o.ID, org: o.Name}, nil
}

// TrustEntries returns the trust entries of a repository or an
// organization, by name.
func (a *App) TrustEntries(ctx context.Context, p *chartctl.Principal, s TrustScope) ([]*chartctl.TrustEntry, error) {
	t, err := a.trustTargetFor(ctx, p, s, false)
	if err != nil {
		return nil, err
	}
	return a.Store.TrustEntries(ctx, t.scope, t.id)
}

// AddTrust adds a trust entry to a repository or an organization after
// checking its material parses (a keyring, a public key, certificates or
// a subject expression), emits trust.added, and re-verifies the versions
// it may concern in the background.
func (a *App) AddTrust(ctx context.Context, p *chartctl.Principal, s TrustScope, spec TrustSpec) (*chartctl.TrustEntry, error) {
	t, err := a.trustTargetFor(ctx, p, s, true)
	if err != nil {
		return nil, err
	}
	e := &chartctl.TrustEntry{ID: NewID("trust_"), Scope: t.scope, ScopeID: t.id, Name: spec.Name, Kind: spec.Kind,
		Key: spec.Key, Issuer: strings.TrimSpace(spec.Issuer), Subject: spec.Subject, CreatedBy: p.User.ID, CreatedAt: a.Now().UTC()}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	if err := checkTrustMaterial(e); err != nil {
		return nil, err
	}
	ev := a.NewEvent(ctx, chartctl.EventTrustAdded, repoName(t), t.org, t.path(), e.Name, TrustData(t.name(), e))
	if err := a.Store.AddTrustEntry(a.Record(ctx, "trust.add", t.name()+"/"+e.Name, t.org, ev), e); err != nil {
		return nil, err
	}
	a.Committed()
	a.ReverifyLater(t.scope, t.name())
	return e, nil
}

// RemoveTrust removes a trust entry, emits trust.removed and re-verifies
// the versions it may concern in the background.
func (a *App) RemoveTrust(ctx context.Context, p *chartctl.Principal, s TrustScope, name string) error {
	t, err := a.trustTargetFor(ctx, p, s, true)
	if err != nil {
		return err
	}
	entries, err := a.Store.TrustEntries(ctx, t.scope, t.id)
	if err != nil {
		return err
	}
	var e *chartctl.TrustEntry
	for _, x := range entries {
		if x.Name == name {
			e = x
		}
	}
	if e == nil {
		return chartctl.Errorf(chartctl.ENOTFOUND, "No trust entry named %q in %s %q; `chartctl trust list` shows them.", name, t.scope, t.name())
	}
	ev := a.NewEvent(ctx, chartctl.EventTrustRemoved, repoName(t), t.org, t.path(), e.Name, TrustData(t.name(), e))
	if err := a.Store.DeleteTrustEntry(a.Record(ctx, "trust.remove", t.name()+"/"+e.Name, t.org, ev), t.scope, t.id, name); err != nil {
		return err
	}
	a.Committed()
	a.ReverifyLater(t.scope, t.name())
	return nil
}

func repoName(t *trustTarget) string {
	if t.repo != nil {
		return t.repo.Name
	}
	return ""
}

// TrustData is a trust entry as events show it (never more than the wire
// does: public material only).
func TrustData(scopeName string, e *chartctl.TrustEntry) map[string]any {
	d := map[string]any{"name": e.Name, "kind": e.Kind, "scope": e.Scope, e.Scope: scopeName, "created_at": ts(e.CreatedAt)}
	if e.Issuer != "" {
		d["issuer"], d["subject"] = e.Issuer, e.Subject
	}
	return d
}

// checkTrustMaterial parses an entry's key material, so a typo is refused
// when it is added instead of verifying nothing later.
func checkTrustMaterial(e *chartctl.TrustEntry) error {
	switch e.Kind {
	case chartctl.TrustPGP:
		if _, err := trust.ParseKeyring(e.Key); err != nil {
			return chartctl.Invalid("key", "The pgp keyring could not be read (%v): export it with `gpg --export KEYID > keyring.gpg` (binary) or `gpg --export --armor`.", err)
		}
	case chartctl.TrustCosignKey:
		if _, err := trust.ParseCosignKey(e.Key); err != nil {
			return chartctl.Invalid("key", "The cosign public key could not be read: give the PEM file `cosign generate-key-pair` wrote (cosign.pub).")
		}
	case chartctl.TrustNotation:
		rest, n := e.Key, 0
		for {
			var b *pem.Block
			b, rest = pem.Decode(rest)
			if b == nil {
				break
			}
			if b.Type != "CERTIFICATE" {
				continue
			}
			if _, err := x509.ParseCertificate(b.Bytes); err != nil {
				return chartctl.Invalid("key", "A notation trust store takes PEM x509 certificates: %v.", err)
			}
			n++
		}
		if n == 0 {
			return chartctl.Invalid("key", "A notation trust store takes PEM x509 certificates (the signing CA's root); none was found.")
		}
		if err := trust.CheckNotationSubject(e.Name, e.Subject); err != nil {
			return chartctl.Invalid("subject", "A notation entry's subject is the x509 subject its signers' certificates must include, e.g. \"C=US, ST=WA, O=Acme\" (Notation requires C, ST and O): %v.", err)
		}
	}
	return nil
}

// TrustEntry resolves a trust name for repository r as a policy names it
// (CONTRACT §18 decision 19): the repository's entry of that name first,
// then its organization's. Returns ENOTFOUND naming where it looked; the
// reserved names none and any are EINVALID (they are not entries).
func (a *App) TrustEntry(ctx context.Context, r *chartctl.Repository, name string) (*chartctl.TrustEntry, error) {
	if name == chartctl.TrustNameNone || name == chartctl.TrustNameAny {
		return nil, chartctl.Invalid("require_signature", "%q is a reserved trust name, not an entry.", name)
	}
	entries, err := a.trustEntriesOf(ctx, r)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Name == name {
			return e, nil
		}
	}
	if r.Organization != "" {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "No trust entry %q in repository %q or organization %q; add one with `chartctl trust add`.", name, r.Name, r.Organization)
	}
	return nil, chartctl.Errorf(chartctl.ENOTFOUND, "No trust entry %q in repository %q; add one with `chartctl trust add`.", name, r.Name)
}

// trustEntriesOf returns the entries that apply to r: its own, then its
// organization's.
func (a *App) trustEntriesOf(ctx context.Context, r *chartctl.Repository) ([]*chartctl.TrustEntry, error) {
	out, err := a.Store.TrustEntries(ctx, chartctl.TrustScopeRepository, r.ID)
	if err != nil {
		return nil, err
	}
	if r.Organization == "" {
		return out, nil
	}
	o, err := a.Store.Organization(ctx, r.Organization)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return out, nil
	} else if err != nil {
		return nil, err
	}
	org, err := a.Store.TrustEntries(ctx, chartctl.TrustScopeOrganization, o.ID)
	if err != nil {
		return nil, err
	}
	return append(out, org...), nil
}

// VerifyVersion recomputes the verification record of one chart version
// from its signatures (its provenance file; cosign signatures of either of
// its OCI manifests, decision 10) and the trust material of its repository
// and organization, stores it with the version's index entry (which names
// the verified signer), emits chart.verified when the version became
// verified, and calls OnVerified. Returns ENOTFOUND if the version does
// not exist.
func (a *App) VerifyVersion(ctx context.Context, repo, chartName, version string) (chartctl.Verification, error) {
	r, err := a.Store.Repository(ctx, repo)
	if err != nil {
		return chartctl.Verification{}, err
	}
	cv, err := a.Store.ChartVersion(ctx, repo, chartName, version)
	if err != nil {
		return chartctl.Verification{}, err
	}
	return a.verifyVersion(ctx, r, cv)
}

// verifyVersion is VerifyVersion of cv, a version of r as stored; an
// upload passes the records it has just written rather than have them
// read again.
func (a *App) verifyVersion(ctx context.Context, r *chartctl.Repository, cv *chartctl.ChartVersion) (chartctl.Verification, error) {
	in, err := a.readVerification(ctx, r, cv)
	if err != nil {
		return chartctl.Verification{}, err
	}
	return a.applyVerification(ctx, r, cv, in)
}

// verificationInput is what verifying a version reads: the trust
// material of its repository and the signatures of the version.
type verificationInput struct {
	entries  []*chartctl.TrustEntry
	evidence trust.Evidence
}

// readVerification reads what verifyVersion of cv needs. The trust
// material and the signatures are read at the same time: on a shared
// store each is a few round trips, and a push waits for them.
func (a *App) readVerification(ctx context.Context, r *chartctl.Repository, cv *chartctl.ChartVersion) (verificationInput, error) {
	var (
		in   verificationInput
		read errgroup.Group
	)
	read.Go(func() (err error) {
		in.entries, err = a.trustEntriesOf(ctx, r)
		return err
	})
	ev, err := a.evidence(ctx, cv)
	if err = errors.Join(read.Wait(), err); err != nil {
		return verificationInput{}, err
	}
	in.evidence = ev
	return in, nil
}

// applyVerification is verifyVersion of cv with what readVerification
// read.
func (a *App) applyVerification(ctx context.Context, r *chartctl.Repository, cv *chartctl.ChartVersion, in verificationInput) (chartctl.Verification, error) {
	v := trust.Verify(in.evidence, in.entries, a.trustOptions())
	if !sameVerdict(cv.Verification, v) {
		// Unsigned and never verified is what a missing record says
		// already: no write on the upload path of every unsigned chart.
		if cv.Verification != nil || v.Status != chartctl.VerificationUnsigned {
			next := *cv
			next.Verification = v
			entry, entryJSON := renderEntries(&next)
			var events []*chartctl.Event
			if v.Status == chartctl.VerificationVerified && cv.Verification.SignedBy() != v.SignedBy() {
				data := ChartData(cv)
				data["verification"] = VerificationData(v)
				events = append(events, a.NewEvent(ctx, chartctl.EventChartVerified, r.Name, r.Organization,
					repoPath(r.Name)+"/charts/"+cv.Name+"/"+cv.Version, cv.Name+"/"+cv.Version, data))
			}
			wctx := ctx
			if len(events) > 0 {
				wctx = a.Record(ctx, "chart.verify", ChartTarget(r.Name, cv.Name, cv.Version), r.Organization, events...)
			}
			if err := a.Store.SetVerification(wctx, r.Name, cv.Name, cv.Version, cv.Digest, v, entry, entryJSON); err != nil {
				return chartctl.Verification{}, err
			}
			if len(events) > 0 {
				a.Committed()
			}
			a.versions.forget(versionKey{r.Name, cv.Name, cv.Version})
			a.versionChanged(context.WithoutCancel(ctx), r.Name, cv.Name, cv.Version)
		}
	}
	// A held version whose signature now verifies is released.
	if err := a.releaseIfSigned(ctx, r, cv, v); err != nil {
		return *v, err
	}
	if a.OnVerified != nil {
		a.OnVerified(ctx, r.ID, cv.Name, cv.Version, *v)
	}
	return *v, nil
}

// VerifyUpload verifies what an upload brings of its own signatures (its
// provenance file, prov; nil when none) against the trust material of
// repository r and its organization, before anything is stored: the
// admission policy's require_signature decides on it. Signatures that
// arrive later (cosign, Notation referrers) are found by VerifyVersion.
func (a *App) VerifyUpload(ctx context.Context, r *chartctl.Repository, chartName, version string, archive, prov []byte) (chartctl.PolicyVerification, error) {
	if prov == nil {
		return chartctl.PolicyVerification{Status: chartctl.VerificationUnsigned}, nil
	}
	entries, err := a.trustEntriesOf(ctx, r)
	if err != nil {
		return chartctl.PolicyVerification{}, err
	}
	ev := trust.Evidence{ArchiveName: chart.ArchiveFileName(chartName, version), Archive: archive, Provenance: prov}
	v := trust.Verify(ev, entries, a.trustOptions())
	out := chartctl.PolicyVerification{Status: v.Status}
	for _, s := range v.Signatures {
		out.Signatures = append(out.Signatures, chartctl.PolicySignature{Kind: s.Kind, Identity: s.Identity, Trust: s.Trust})
	}
	return out, nil
}

// renderEntries renders cv's index entry afresh (not its stored one),
// and the JSON object to store with it.
func renderEntries(cv *chartctl.ChartVersion) (entry, entryJSON []byte) {
	c := *cv
	c.IndexEntry, c.IndexEntryJSON = nil, nil
	c.IndexEntry = helmindex.RenderEntry(&c)
	return c.IndexEntry, helmindex.RenderEntryJSON(&c)
}

// sameVerdict reports whether a stored record says what v says, apart
// from when each was computed (a re-verification that changes nothing
// writes nothing).
func sameVerdict(old, v *chartctl.Verification) bool {
	if old == nil || old.Status != v.Status || len(old.Signatures) != len(v.Signatures) {
		return false
	}
	for i, s := range old.Signatures {
		n := v.Signatures[i]
		if s.Kind != n.Kind || s.Identity != n.Identity || s.Trust != n.Trust || s.Verified() != n.Verified() || s.Reason != n.Reason {
			return false
		}
	}
	return true
}

// VerificationData is a verification record as /v1 and events show it.
func VerificationData(v *chartctl.Verification) map[string]any {
	sigs := []map[string]any{}
	status := chartctl.VerificationUnsigned
	if v != nil {
		status = v.Status
		for _, s := range v.Signatures {
			m := map[string]any{"kind": s.Kind, "identity": s.Identity, "trust": s.Trust, "verified_at": nil}
			if s.VerifiedAt != nil {
				m["verified_at"] = ts(*s.VerifiedAt)
			}
			sigs = append(sigs, m)
		}
	}
	return map[string]any{"status": status, "signatures": sigs}
}

// maxSignatureSize bounds what is read of one signature artifact: bundles
// and simple-signing payloads are a few KiB.
const maxSignatureSize = 1 << 20

// evidence gathers what cv can be verified by: its archive and provenance
// file, and the cosign and Notation signatures of its OCI manifests
// (referrers: cosign bundles and Notation envelopes; and cosign's legacy
// sha256-<hex>.sig tag).
func (a *App) evidence(ctx context.Context, cv *chartctl.ChartVersion) (trust.Evidence, error) {
	ev := trust.Evidence{ArchiveName: chart.ArchiveFileName(cv.Name, cv.Version)}
	if cv.ProvDigest != "" {
		archive, err := a.readBlob(ctx, cv.Digest, a.Config.MaxChartSize)
		if err != nil {
			return ev, err
		}
		prov, err := a.readBlob(ctx, cv.ProvDigest, maxSignatureSize)
		if err != nil {
			return ev, err
		}
		ev.Archive, ev.Provenance = archive, prov
	}
	oci, ok := a.Store.(chartctl.OCIStore)
	if !ok {
		return ev, nil
	}
	digests, err := a.chartManifestDigests(ctx, oci, cv)
	if err != nil {
		return ev, err
	}
	name := cv.Repository + "/" + cv.Name
	for _, d := range digests {
		// The legacy signature tag is looked up while the referrers are
		// read (a round trip each on a shared store).
		var (
			sd     string
			tagErr error
			looked errgroup.Group
		)
		looked.Go(func() error {
			sd, tagErr = oci.Tag(ctx, name, strings.Replace(d, ":", "-", 1)+".sig")
			return nil
		})
		refs, err := oci.Referrers(ctx, name, d)
		_ = looked.Wait() // its error is tagErr, read below
		if err != nil {
			return ev, err
		}
		for _, m := range refs {
			if m.ArtifactType == trust.ArtifactTypeNotation {
				ev.Artifacts = append(ev.Artifacts, a.notationArtifacts(ctx, name, d, m)...)
				continue
			}
			if m.ArtifactType != trust.MediaTypeSigstoreBundle {
				continue
			}
			for _, b := range manifestLayers(m, trust.MediaTypeSigstoreBundle) {
				payload, err := a.readBlob(ctx, b.digest, maxSignatureSize)
				if err != nil {
					a.Logger.Warn("read cosign bundle", "name", name, "digest", b.digest, "err", err)
					continue
				}
				ev.Artifacts = append(ev.Artifacts, trust.Artifact{Format: trust.FormatCosignBundle, Subject: d, Payload: payload})
			}
		}
		if chartctl.ErrorCode(tagErr) == chartctl.ENOTFOUND {
			continue
		} else if tagErr != nil {
			return ev, tagErr
		}
		m, err := oci.Manifest(ctx, name, sd)
		if err != nil {
			return ev, err
		}
		for _, b := range manifestLayers(m, trust.MediaTypeSimpleSigning) {
			payload, err := a.readBlob(ctx, b.digest, maxSignatureSize)
			if err != nil {
				a.Logger.Warn("read cosign signature", "name", name, "digest", b.digest, "err", err)
				continue
			}
			ev.Artifacts = append(ev.Artifacts, trust.Artifact{Format: trust.FormatCosignSimpleSigning, Subject: d,
				Payload: payload, Signature: b.annotations[trust.AnnotationCosignSignature]})
		}
	}
	return ev, nil
}

// notationArtifacts returns the Notation signature envelopes of signature
// manifest m, a referrer of the manifest with digest d in name: each layer
// of an envelope media type, with the signed manifest's descriptor (m's
// subject) that the envelope's payload must name.
func (a *App) notationArtifacts(ctx context.Context, name, d string, m *chartctl.OCIManifest) []trust.Artifact {
	var doc ocispec.Manifest
	if json.Unmarshal(m.Content, &doc) != nil || doc.Subject == nil {
		return nil
	}
	var out []trust.Artifact
	for _, l := range doc.Layers {
		if l.MediaType != trust.MediaTypeNotationJWS && l.MediaType != trust.MediaTypeNotationCOSE {
			continue
		}
		payload, err := a.readBlob(ctx, l.Digest.String(), maxSignatureSize)
		if err != nil {
			a.Logger.Warn("read notation signature", "name", name, "digest", l.Digest.String(), "err", err)
			continue
		}
		out = append(out, trust.Artifact{Format: trust.FormatNotation, Subject: d, Payload: payload, MediaType: l.MediaType,
			Descriptor: ocispec.Descriptor{MediaType: doc.Subject.MediaType, Digest: doc.Subject.Digest, Size: doc.Subject.Size}})
	}
	return out
}

// chartManifestDigests returns the digests of cv's OCI manifests: the one
// stored (pushed over OCI) or derived (uploaded by /v1), and an alternate.
func (a *App) chartManifestDigests(ctx context.Context, oci chartctl.OCIStore, cv *chartctl.ChartVersion) ([]string, error) {
	if a.ChartManifestDigests != nil {
		return a.ChartManifestDigests(ctx, cv)
	}
	m, err := oci.ChartManifest(ctx, cv.Repository, cv.Name, cv.Version)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return []string{m.Digest}, nil
}

func (a *App) readBlob(ctx context.Context, digest string, limit int64) ([]byte, error) {
	b, err := a.ReadBlob(ctx, digest)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	if limit > 0 && b.Size() > limit {
		return nil, errors.New("blob " + digest + " is larger than a signature can be")
	}
	return io.ReadAll(b)
}

// reverify is the state of the background re-verification (decision 11).
type reverify struct {
	mu      sync.Mutex
	pending bool
	running bool
	done    int
	total   int
}

// reverifyLease names the lease one replica at a time re-verifies under.
const reverifyLease = "trust-reverify"

// ReverifyLater re-verifies, in the background, the stored versions a
// trust change in scope may concern: those of the repository, or of every
// repository of the organization. Calls while a run is going on ask for
// one more run afterwards.
func (a *App) ReverifyLater(scope, name string) {
	a.reverify.mu.Lock()
	if a.reverify.running {
		a.reverify.pending = true
		a.reverify.mu.Unlock()
		return
	}
	a.reverify.running = true
	a.reverify.mu.Unlock()
	go func() {
		for {
			if err := a.ReverifyAll(context.Background(), func(r *chartctl.Repository) bool {
				switch scope {
				case chartctl.TrustScopeRepository:
					return r.Name == name
				case chartctl.TrustScopeOrganization:
					return r.Organization == name
				}
				return true
			}); err != nil {
				a.Logger.Error("re-verify chart versions", "err", err)
			}
			// require_signature reads the verification records just
			// recomputed: versions may comply, or no longer, under it.
			a.RecheckLater(scope, name)
			a.reverify.mu.Lock()
			if !a.reverify.pending {
				a.reverify.running = false
				a.reverify.mu.Unlock()
				return
			}
			// A later change may concern any repository: widen the next
			// run to every one.
			a.reverify.pending, scope = false, ""
			a.reverify.mu.Unlock()
		}
	}()
}

// ReverifyProgress reports the background re-verification: whether one is
// running, and how many versions it has done of how many.
func (a *App) ReverifyProgress() (running bool, done, total int) {
	a.reverify.mu.Lock()
	defer a.reverify.mu.Unlock()
	return a.reverify.running, a.reverify.done, a.reverify.total
}

// ReverifyAll re-verifies every stored version of the repositories match
// accepts (nil: all), under a lease so one replica does it, logging its
// progress. It is also the backfill of versions stored before
// verification existed: run it after an upgrade, never at start.
func (a *App) ReverifyAll(ctx context.Context, match func(*chartctl.Repository) bool) error {
	const ttl = time.Minute
	ok, err := a.Store.AcquireLease(ctx, reverifyLease, a.Replica, ttl)
	if err != nil || !ok {
		return err
	}
	defer func() { _ = a.Store.ReleaseLease(context.WithoutCancel(ctx), reverifyLease, a.Replica) }()
	repos, err := a.Store.Repositories(ctx)
	if err != nil {
		return err
	}
	var todo []*chartctl.ChartVersion
	for _, r := range repos {
		if match != nil && !match(r) {
			continue
		}
		cvs, err := a.Store.ChartVersions(ctx, r.Name, chartctl.ChartFilter{IncludeHeld: true})
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			continue
		} else if err != nil {
			return err
		}
		todo = append(todo, cvs...)
	}
	a.reverify.mu.Lock()
	a.reverify.done, a.reverify.total = 0, len(todo)
	a.reverify.mu.Unlock()
	a.Logger.Info("re-verifying chart versions", "versions", len(todo))
	renewed := a.Now()
	for i, cv := range todo {
		if a.Now().Sub(renewed) > ttl/3 {
			// Keep the lease while the run lasts.
			if ok, err := a.Store.AcquireLease(ctx, reverifyLease, a.Replica, ttl); err != nil || !ok {
				return err
			}
			renewed = a.Now()
		}
		if _, err := a.VerifyVersion(ctx, cv.Repository, cv.Name, cv.Version); err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			a.Logger.Warn("re-verify chart version", "repository", cv.Repository, "chart", cv.Name, "version", cv.Version, "err", err)
		}
		a.reverify.mu.Lock()
		a.reverify.done = i + 1
		a.reverify.mu.Unlock()
		if (i+1)%500 == 0 {
			a.Logger.Info("re-verifying chart versions", "done", i+1, "of", len(todo))
		}
	}
	a.Logger.Info("re-verified chart versions", "versions", len(todo))
	return nil
}

// layer is one layer of a signature manifest.
type layer struct {
	digest      string
	annotations map[string]string
}

// manifestLayers returns the layers of m of media type mediaType; a
// manifest that does not parse has none.
func manifestLayers(m *chartctl.OCIManifest, mediaType string) []layer {
	var doc ocispec.Manifest
	if json.Unmarshal(m.Content, &doc) != nil {
		return nil
	}
	var out []layer
	for _, l := range doc.Layers {
		if l.MediaType == mediaType {
			out = append(out, layer{digest: l.Digest.String(), annotations: l.Annotations})
		}
	}
	return out
}
