package backup

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// The records of records.jsonl: one JSON object per line, {"kind", "data"},
// kind one of chartctl.DumpKinds. Their field names are this format's own,
// independent of any engine's storage and of Go field names. Format 1 had
// the kinds user … chart_version with fewer fields; every field added
// since is optional, so these types read both.

type line struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

type userRec struct {
	ID           string     `json:"id"`
	Email        string     `json:"email"`
	PasswordHash string     `json:"password_hash,omitempty"`
	Admin        bool       `json:"admin"`
	Disabled     bool       `json:"disabled,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	LastSeenAt   *time.Time `json:"last_seen_at,omitempty"`
	// Identity is the identity provider account the user is bound to
	// (format 4); absent for local accounts.
	Identity *identityRec `json:"identity,omitempty"`
	// IDPGroups are the groups of the user's last IdP sign-in (format 5).
	IDPGroups []string `json:"idp_groups,omitempty"`
}

type identityRec struct {
	Provider string `json:"provider"`
	Issuer   string `json:"issuer,omitempty"`
	Subject  string `json:"subject"`
}

type apiKeyRec struct {
	ID         string     `json:"id"`
	UserID     string     `json:"user_id"`
	Name       string     `json:"name"`
	Scopes     []string   `json:"scopes"`
	Hash       []byte     `json:"hash"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	// Repositories restricts the key (format 3); absent: unrestricted.
	Repositories []string `json:"repositories,omitempty"`
}

// grantRec, robotRec and publisherRec are the kinds format 3 added.
type grantRec struct {
	ID           string    `json:"id"`
	RepositoryID string    `json:"repository_id"`
	Repository   string    `json:"repository"`
	Kind         string    `json:"kind"`
	SubjectID    string    `json:"subject_id"`
	Subject      string    `json:"subject"`
	Role         string    `json:"role"`
	CreatedBy    string    `json:"created_by,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
}

// robotRec carries the robot's secret hashes (never a secret), so a
// restored robot keeps working.
type robotRec struct {
	ID                      string     `json:"id"`
	OrganizationID          string     `json:"organization_id"`
	Organization            string     `json:"organization"`
	Name                    string     `json:"name"`
	Description             string     `json:"description,omitempty"`
	Repositories            []string   `json:"repositories"`
	Permissions             []string   `json:"permissions"`
	SecretHash              []byte     `json:"secret_hash"`
	PreviousSecretHash      []byte     `json:"previous_secret_hash,omitempty"`
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at,omitempty"`
	Disabled                bool       `json:"disabled,omitempty"`
	ExpiresAt               *time.Time `json:"expires_at,omitempty"`
	LastUsedAt              *time.Time `json:"last_used_at,omitempty"`
	CreatedBy               string     `json:"created_by,omitempty"`
	CreatedAt               time.Time  `json:"created_at"`
}

// trustRec is the kind format 5 added (issue #30).
type trustRec struct {
	ID        string    `json:"id"`
	Scope     string    `json:"scope"`
	ScopeID   string    `json:"scope_id"`
	Name      string    `json:"name"`
	Kind      string    `json:"kind"`
	Key       []byte    `json:"key,omitempty"`
	Issuer    string    `json:"issuer,omitempty"`
	Subject   string    `json:"subject,omitempty"`
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

type publisherRec struct {
	ID        string            `json:"id"`
	RobotID   string            `json:"robot_id"`
	Issuer    string            `json:"issuer"`
	Audience  string            `json:"audience"`
	Claims    map[string]string `json:"claims,omitempty"`
	CreatedBy string            `json:"created_by,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
}

type oauthClientRec struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	RedirectURIs []string  `json:"redirect_uris"`
	Public       bool      `json:"public"`
	SecretHash   []byte    `json:"secret_hash,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
}

type organizationRec struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	CreatedBy   string    `json:"created_by,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

type repositoryRec struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	Description  string    `json:"description,omitempty"`
	Organization string    `json:"organization,omitempty"`
	OwnerID      string    `json:"owner_id,omitempty"`
	Visibility   string    `json:"visibility"`
	CreatedAt    time.Time `json:"created_at"`
	// IndexFormat is "json" or "yaml"; backups written before format 5
	// have none, and restore as yaml (what those repositories served).
	IndexFormat string `json:"index_format,omitempty"`
	// Mirror is set for a mirror repository; backups written before
	// mirrors existed have none.
	Mirror *mirrorRec `json:"mirror,omitempty"`
	// ArtifactHub is the repository's artifacthub-repo.yml (format 9);
	// backups written before have none.
	ArtifactHub *artifactHubRec `json:"artifacthub,omitempty"`
	// Proxy is set for a proxy repository (format 9 on; issue #31).
	Proxy *proxyRec `json:"proxy,omitempty"`
}

// artifactHubRec is a repository's Artifact Hub metadata, in Artifact
// Hub's field names.
type artifactHubRec struct {
	RepositoryID string              `json:"repositoryID,omitempty"`
	Owners       []artifactHubOwner  `json:"owners,omitempty"`
	Ignore       []artifactHubIgnore `json:"ignore,omitempty"`
}

type artifactHubOwner struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

type artifactHubIgnore struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

func newArtifactHubRec(a *chartctl.ArtifactHubRepo) *artifactHubRec {
	if a.Empty() {
		return nil
	}
	rec := &artifactHubRec{RepositoryID: a.RepositoryID}
	for _, o := range a.Owners {
		rec.Owners = append(rec.Owners, artifactHubOwner(o))
	}
	for _, i := range a.Ignore {
		rec.Ignore = append(rec.Ignore, artifactHubIgnore(i))
	}
	return rec
}

func (r *artifactHubRec) domain() *chartctl.ArtifactHubRepo {
	if r == nil {
		return nil
	}
	a := &chartctl.ArtifactHubRepo{RepositoryID: r.RepositoryID}
	for _, o := range r.Owners {
		a.Owners = append(a.Owners, chartctl.ArtifactHubOwner(o))
	}
	for _, i := range r.Ignore {
		a.Ignore = append(a.Ignore, chartctl.ArtifactHubIgnore(i))
	}
	return a
}

// proxyRec is a proxy repository's settings; the password stays sealed
// with the server's secrets key, as a mirror's.
type proxyRec struct {
	URL              string   `json:"url"`
	Username         string   `json:"username,omitempty"`
	SealedPassword   []byte   `json:"sealed_password,omitempty"`
	TTLSeconds       int64    `json:"ttl_seconds"`
	RetentionSeconds int64    `json:"retention_seconds,omitempty"`
	Include          []string `json:"include,omitempty"`
	Exclude          []string `json:"exclude,omitempty"`
}

func newProxyRec(p *chartctl.Proxy) *proxyRec {
	if p == nil {
		return nil
	}
	return &proxyRec{URL: p.URL, Username: p.Username, SealedPassword: p.Password, TTLSeconds: int64(p.TTL / time.Second), RetentionSeconds: int64(p.Retention / time.Second),
		Include: p.Include, Exclude: p.Exclude}
}

func (p *proxyRec) domain() *chartctl.Proxy {
	if p == nil {
		return nil
	}
	return (&chartctl.Proxy{URL: p.URL, Username: p.Username, Password: p.SealedPassword, TTL: time.Duration(p.TTLSeconds) * time.Second, Retention: time.Duration(p.RetentionSeconds) * time.Second,
		Include: p.Include, Exclude: p.Exclude}).Clone()
}

// mirrorRec is a mirror's settings and sync state. The password stays
// sealed with the server's secrets key (CONTRACT §12: backups carry
// secrets encrypted), so a restore needs the same key to sync.
type mirrorRec struct {
	URL             string     `json:"url"`
	IntervalSeconds int64      `json:"interval_seconds"`
	Username        string     `json:"username,omitempty"`
	SealedPassword  []byte     `json:"sealed_password,omitempty"`
	Status          string     `json:"status"`
	LastSyncAt      *time.Time `json:"last_sync_at,omitempty"`
	LastAttemptAt   *time.Time `json:"last_attempt_at,omitempty"`
	Error           string     `json:"error,omitempty"`
}

func newMirrorRec(m *chartctl.Mirror) *mirrorRec {
	if m == nil {
		return nil
	}
	return &mirrorRec{URL: m.URL, IntervalSeconds: int64(m.Interval / time.Second), Username: m.Username, SealedPassword: m.Password,
		Status: string(m.Status), LastSyncAt: m.LastSyncAt, LastAttemptAt: m.LastAttemptAt, Error: m.Error}
}

func (m *mirrorRec) domain() *chartctl.Mirror {
	if m == nil {
		return nil
	}
	return &chartctl.Mirror{
		MirrorSettings: chartctl.MirrorSettings{URL: m.URL, Interval: time.Duration(m.IntervalSeconds) * time.Second, Username: m.Username, Password: m.SealedPassword},
		MirrorState:    chartctl.MirrorState{Status: chartctl.MirrorStatus(m.Status), LastSyncAt: m.LastSyncAt, LastAttemptAt: m.LastAttemptAt, Error: m.Error},
	}
}

type teamRec struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	Organization string    `json:"organization"`
	Description  string    `json:"description,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	// IDPGroups binds the team to identity provider groups (format 5).
	IDPGroups []string `json:"idp_groups,omitempty"`
}

// scimTokenRec and scimGroupRec are the kinds format 5 added; a token
// carries its hash, never its value.
type scimTokenRec struct {
	ID         string     `json:"id"`
	Name       string     `json:"name,omitempty"`
	Hash       []byte     `json:"hash"`
	CreatedBy  string     `json:"created_by,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
}

type scimGroupRec struct {
	ID          string    `json:"id"`
	DisplayName string    `json:"display_name"`
	ExternalID  string    `json:"external_id,omitempty"`
	Members     []string  `json:"members,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

type memberRec struct {
	ID      string    `json:"id"`
	Team    string    `json:"team"`
	Email   string    `json:"email"`
	Role    string    `json:"role"`
	AddedAt time.Time `json:"added_at"`
}

type chartVersionRec struct {
	Repository    string          `json:"repository"`
	Name          string          `json:"name"`
	Version       string          `json:"version"`
	AppVersion    string          `json:"app_version,omitempty"`
	Description   string          `json:"description,omitempty"`
	Keywords      []string        `json:"keywords,omitempty"`
	Digest        string          `json:"digest"`
	ContentDigest string          `json:"content_digest,omitempty"`
	Size          int64           `json:"size"`
	ProvDigest    string          `json:"prov_digest,omitempty"`
	ProvSize      int64           `json:"prov_size,omitempty"`
	CreatedAt     time.Time       `json:"created_at"`
	Metadata      json.RawMessage `json:"metadata,omitempty"`
	IndexEntry    []byte          `json:"index_entry,omitempty"`
	Downloads     int64           `json:"downloads,omitempty"`
	LastDownload  *time.Time      `json:"last_downloaded_at,omitempty"`
	// Verification is the version's verification record (format 7);
	// absent when it was never verified.
	Verification *verificationRec `json:"verification,omitempty"`
	// HeldUntil is set while the version is held (format 9); absent for
	// every other version.
	HeldUntil *time.Time `json:"held_until,omitempty"`
	// Images is the version's image record (format 9); absent while
	// pending, so a restored server's backfill finds them.
	Images *imagesRec `json:"images,omitempty"`
	// Policy is the version's admission verdict (format 9); absent when
	// no policy recorded one.
	Policy *versionPolicyRec `json:"policy,omitempty"`
	// IndexEntryJSON is the JSON index's object for IndexEntry (format
	// 9); absent for a version stored before it was kept, which the
	// restored server's backfill fills.
	IndexEntryJSON []byte `json:"index_entry_json,omitempty"`
}

type imagesRec struct {
	Images      []string  `json:"images,omitempty"`
	Source      string    `json:"source"`
	Error       string    `json:"error,omitempty"`
	KubeVersion string    `json:"kube_version,omitempty"`
	CheckedAt   time.Time `json:"checked_at"`
}

func toImagesRec(img *chartctl.Images) *imagesRec {
	if img == nil {
		return nil
	}
	return &imagesRec{img.Images, img.Source, img.Error, img.KubeVersion, img.CheckedAt}
}

func (r *imagesRec) domain() *chartctl.Images {
	if r == nil {
		return nil
	}
	return &chartctl.Images{Images: r.Images, Source: r.Source, Error: r.Error, KubeVersion: r.KubeVersion, CheckedAt: r.CheckedAt}
}

type versionPolicyRec struct {
	Findings  []findingRec `json:"findings,omitempty"`
	CheckedAt time.Time    `json:"checked_at"`
	PolicyAt  *time.Time   `json:"policy_at,omitempty"`
}

type findingRec struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

func toVersionPolicyRec(p *chartctl.VersionPolicy) *versionPolicyRec {
	if p == nil {
		return nil
	}
	out := &versionPolicyRec{CheckedAt: p.CheckedAt}
	if !p.PolicyAt.IsZero() {
		at := p.PolicyAt
		out.PolicyAt = &at
	}
	for _, f := range p.Findings {
		out.Findings = append(out.Findings, findingRec(f))
	}
	return out
}

func (p *versionPolicyRec) domain() *chartctl.VersionPolicy {
	if p == nil {
		return nil
	}
	out := &chartctl.VersionPolicy{CheckedAt: p.CheckedAt}
	if p.PolicyAt != nil {
		out.PolicyAt = *p.PolicyAt
	}
	for _, f := range p.Findings {
		out.Findings = append(out.Findings, chartctl.Finding(f))
	}
	return out
}

type verificationRec struct {
	Status     string         `json:"status"`
	Signatures []signatureRec `json:"signatures,omitempty"`
	CheckedAt  time.Time      `json:"checked_at"`
}

type signatureRec struct {
	Kind       string     `json:"kind"`
	Identity   string     `json:"identity,omitempty"`
	Trust      string     `json:"trust,omitempty"`
	VerifiedAt *time.Time `json:"verified_at,omitempty"`
	Reason     string     `json:"reason,omitempty"`
}

func toVerificationRec(v *chartctl.Verification) *verificationRec {
	if v == nil {
		return nil
	}
	out := &verificationRec{Status: v.Status, CheckedAt: v.CheckedAt}
	for _, s := range v.Signatures {
		out.Signatures = append(out.Signatures, signatureRec{s.Kind, s.Identity, s.Trust, s.VerifiedAt, s.Reason})
	}
	return out
}

func (v *verificationRec) domain() *chartctl.Verification {
	if v == nil {
		return nil
	}
	out := &chartctl.Verification{Status: v.Status, CheckedAt: v.CheckedAt}
	for _, s := range v.Signatures {
		out.Signatures = append(out.Signatures, chartctl.Signature{Kind: s.Kind, Identity: s.Identity, Trust: s.Trust, VerifiedAt: s.VerifiedAt, Reason: s.Reason})
	}
	return out
}

type quotaRec struct {
	Scope       string `json:"scope"`
	Name        string `json:"name"`
	MaxBytes    *int64 `json:"max_bytes,omitempty"`
	MaxVersions *int64 `json:"max_versions,omitempty"`
}

// retentionRec writes durations as Go duration strings ("720h0m0s").
type retentionRec struct {
	Repository             string  `json:"repository"`
	KeepLatest             *int    `json:"keep_latest,omitempty"`
	KeepPushedWithin       *string `json:"keep_pushed_within,omitempty"`
	KeepDownloadedWithin   *string `json:"keep_downloaded_within,omitempty"`
	KeepMatching           string  `json:"keep_matching,omitempty"`
	DeletePrereleasesAfter *string `json:"delete_prereleases_after,omitempty"`
	Schedule               string  `json:"schedule,omitempty"`
}

// policyRec is an admission policy (format 5), bound to its repository or
// organization by ID.
type policyRec struct {
	Scope             string    `json:"scope"`
	ID                string    `json:"id"`
	RequireSignature  string    `json:"require_signature"`
	HoldWindow        string    `json:"hold_window"`
	Lint              string    `json:"lint"`
	ValuesSchema      bool      `json:"values_schema"`
	RequiredFields    []string  `json:"required_fields,omitempty"`
	NamePattern       string    `json:"name_pattern,omitempty"`
	AllowPrerelease   bool      `json:"allow_prerelease"`
	MonotonicVersions bool      `json:"monotonic_versions"`
	ImagesPinned      bool      `json:"images_pinned"`
	MaxSize           int64     `json:"max_size"`
	DenyFiles         []string  `json:"deny_files,omitempty"`
	UpdatedAt         time.Time `json:"updated_at"`
}

// replicationRec (format 9) carries the target's password sealed, as
// the store keeps it, and is bound to its source repository by ID.
type replicationRec struct {
	ID             string     `json:"id"`
	Name           string     `json:"name"`
	Source         string     `json:"source"`
	SourceID       string     `json:"source_id"`
	Target         string     `json:"target"`
	Username       string     `json:"username,omitempty"`
	SealedPassword []byte     `json:"sealed_password,omitempty"`
	FilterName     string     `json:"filter_name,omitempty"`
	FilterVersion  string     `json:"filter_version,omitempty"`
	On             []string   `json:"on"`
	CreatedBy      string     `json:"created_by,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	LastSuccessAt  *time.Time `json:"last_success_at,omitempty"`
	LastError      string     `json:"last_error,omitempty"`
}

// webhookRec carries the secret sealed, as the store keeps it.
type webhookRec struct {
	ID         string `json:"id"`
	Repository string `json:"repository,omitempty"`
	// RepositoryID is the ID of a repository webhook's repository; backups
	// written before webhooks were bound to it have none (the restore
	// binds them to the repository of that name).
	RepositoryID   string    `json:"repository_id,omitempty"`
	Organization   string    `json:"organization,omitempty"`
	URL            string    `json:"url"`
	Events         []string  `json:"events"`
	Active         bool      `json:"active"`
	SealedSecret   []byte    `json:"sealed_secret"`
	CreatedBy      string    `json:"created_by,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
	DisabledReason string    `json:"disabled_reason,omitempty"`
}

type ociBlobLinkRec struct {
	Name     string    `json:"name"`
	Digest   string    `json:"digest"`
	Size     int64     `json:"size"`
	LinkedAt time.Time `json:"linked_at"`
}

type ociChartRec struct {
	Repository string `json:"repository"`
	Name       string `json:"name"`
	Version    string `json:"version"`
}

type ociManifestRec struct {
	Name         string            `json:"name"`
	Digest       string            `json:"digest"`
	MediaType    string            `json:"media_type"`
	ArtifactType string            `json:"artifact_type,omitempty"`
	Subject      string            `json:"subject,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	Blobs        []string          `json:"blobs,omitempty"`
	Manifests    []string          `json:"manifests,omitempty"`
	Content      []byte            `json:"content"`
	Chart        *ociChartRec      `json:"chart,omitempty"`
	CreatedAt    time.Time         `json:"created_at"`
	// Alternate: a chart version's second manifest
	// (chartctl.OCIManifest.Alternate).
	Alternate bool `json:"alternate,omitempty"`
}

type ociTagRec struct {
	Name   string `json:"name"`
	Tag    string `json:"tag"`
	Digest string `json:"digest"`
}

type actorRec struct {
	UserID         string `json:"user_id,omitempty"`
	Email          string `json:"email,omitempty"`
	CredentialID   string `json:"credential_id,omitempty"`
	CredentialKind string `json:"credential_kind,omitempty"`
	ClientIP       string `json:"client_ip,omitempty"`
	RequestID      string `json:"request_id,omitempty"`
	// Robot and Publisher (format 3) name a robot's credential.
	Robot     string `json:"robot,omitempty"`
	Publisher string `json:"publisher,omitempty"`
}

type auditRec struct {
	ID           string    `json:"id"`
	Time         time.Time `json:"time"`
	Actor        actorRec  `json:"actor"`
	Action       string    `json:"action"`
	Target       string    `json:"target,omitempty"`
	Outcome      string    `json:"outcome"`
	Organization string    `json:"organization,omitempty"`
}

func durationString(d *time.Duration) *string {
	if d == nil {
		return nil
	}
	s := d.String()
	return &s
}

func parseDuration(field string, s *string) (*time.Duration, error) {
	if s == nil {
		return nil, nil
	}
	d, err := time.ParseDuration(*s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return &d, nil
}

// encodeRecord turns a dump record into one line of records.jsonl.
func encodeRecord(r chartctl.DumpRecord) ([]byte, error) {
	var v any
	switch {
	case r.User != nil:
		u := r.User
		rec := userRec{u.ID, u.Email, u.PasswordHash, u.Admin, u.Disabled, u.CreatedAt, u.LastSeenAt, nil, u.IDPGroups}
		if !u.Identity.Local() {
			rec.Identity = &identityRec{u.Identity.Provider, u.Identity.Issuer, u.Identity.Subject}
		}
		v = rec
	case r.APIKey != nil:
		k := r.APIKey
		v = apiKeyRec{k.ID, k.UserID, k.Name, k.Scopes.Strings(), k.Hash, k.CreatedAt, k.LastUsedAt, k.ExpiresAt, k.Repositories}
	case r.OAuthClient != nil:
		c := r.OAuthClient
		v = oauthClientRec{c.ID, c.Name, c.RedirectURIs, c.Public, c.SecretHash, c.CreatedAt}
	case r.Organization != nil:
		o := r.Organization
		v = organizationRec{o.ID, o.Name, o.Description, o.CreatedBy, o.CreatedAt}
	case r.Repository != nil:
		p := r.Repository
		v = repositoryRec{p.ID, p.Name, p.Description, p.Organization, p.OwnerID, string(p.Visibility), p.CreatedAt, string(p.IndexFormat), newMirrorRec(p.Mirror), newArtifactHubRec(p.ArtifactHub), newProxyRec(p.Proxy)}
	case r.Team != nil:
		t := r.Team
		v = teamRec{t.ID, t.Name, t.Organization, t.Description, t.CreatedAt, t.IDPGroups}
	case r.Member != nil:
		m := r.Member
		v = memberRec{m.ID, m.Team, m.Email, string(m.Role), m.AddedAt}
	case r.ChartVersion != nil:
		c := r.ChartVersion
		v = chartVersionRec{c.Repository, c.Name, c.Version, c.AppVersion, c.Description, c.Keywords, c.Digest, c.ContentDigest,
			c.Size, c.ProvDigest, c.ProvSize, c.CreatedAt, c.Metadata, c.IndexEntry, c.Downloads, c.LastDownloadedAt, toVerificationRec(c.Verification), c.HeldUntil,
			toImagesRec(c.Images), toVersionPolicyRec(c.Policy), c.IndexEntryJSON}
	case r.Quota != nil:
		q := r.Quota
		v = quotaRec{q.Scope, q.Name, q.Quota.MaxBytes, q.Quota.MaxVersions}
	case r.Retention != nil:
		p := r.Retention.Policy
		v = retentionRec{r.Retention.Repository, p.KeepLatest, durationString(p.KeepPushedWithin), durationString(p.KeepDownloadedWithin),
			p.KeepMatching, durationString(p.DeletePrereleasesAfter), p.Schedule}
	case r.Policy != nil:
		p := r.Policy.Policy
		v = policyRec{r.Policy.Scope, r.Policy.ID, p.RequireSignature, p.HoldWindow.String(), p.Lint, p.ValuesSchema, p.RequiredFields,
			p.NamePattern, p.AllowPrerelease, p.MonotonicVersions, p.ImagesPinned, p.MaxSize, p.DenyFiles, p.UpdatedAt}
	case r.Replication != nil:
		x := r.Replication
		on := []string{}
		for _, o := range x.On {
			on = append(on, string(o))
		}
		v = replicationRec{x.ID, x.Name, x.Source, x.SourceID, x.Target, x.Username, x.Password, x.Filter.Name, x.Filter.Version, on,
			x.CreatedBy, x.CreatedAt, x.LastSuccessAt, x.LastError}
	case r.Webhook != nil:
		w := r.Webhook
		v = webhookRec{w.ID, w.Repository, w.RepositoryID, w.Organization, w.URL, w.Events, w.Active, w.Secret, w.CreatedBy, w.CreatedAt, w.DisabledReason}
	case r.OCIBlobLink != nil:
		l := r.OCIBlobLink
		v = ociBlobLinkRec{l.Name, l.Digest, l.Size, l.LinkedAt}
	case r.OCIManifest != nil:
		m := r.OCIManifest
		rec := ociManifestRec{m.Name, m.Digest, m.MediaType, m.ArtifactType, m.Subject, m.Annotations, m.Blobs, m.Manifests,
			m.Content, nil, m.CreatedAt, false}
		if m.Chart != nil {
			rec.Chart = &ociChartRec{m.Chart.Repository, m.Chart.Name, m.Chart.Version}
			rec.Alternate = m.Alternate
		}
		v = rec
	case r.OCITag != nil:
		t := r.OCITag
		v = ociTagRec{t.Name, t.Tag, t.Digest}
	case r.AuditEntry != nil:
		e := r.AuditEntry
		a := e.Actor
		v = auditRec{e.ID, e.Time, actorRec{a.UserID, a.Email, a.CredentialID, a.CredentialKind, a.ClientIP, a.RequestID, a.Robot, a.Publisher}, e.Action, e.Target, string(e.Outcome), e.Organization}
	case r.Grant != nil:
		g := r.Grant
		v = grantRec{g.ID, g.RepositoryID, g.Repository, string(g.Kind), g.SubjectID, g.Subject, string(g.Role), g.CreatedBy, g.CreatedAt}
	case r.Robot != nil:
		b := r.Robot
		v = robotRec{b.ID, b.OrganizationID, b.Organization, b.Name, b.Description, b.Repositories, b.Permissions.Strings(),
			b.SecretHash, b.PreviousSecretHash, b.PreviousSecretExpiresAt, b.Disabled, b.ExpiresAt, b.LastUsedAt, b.CreatedBy, b.CreatedAt}
	case r.Publisher != nil:
		p := r.Publisher
		v = publisherRec{p.ID, p.RobotID, p.Issuer, p.Audience, p.Claims, p.CreatedBy, p.CreatedAt}
	case r.SCIMToken != nil:
		t := r.SCIMToken
		v = scimTokenRec{t.ID, t.Name, t.Hash, t.CreatedBy, t.CreatedAt, t.LastUsedAt}
	case r.SCIMGroup != nil:
		g := r.SCIMGroup
		v = scimGroupRec{g.ID, g.DisplayName, g.ExternalID, g.Members, g.CreatedAt, g.UpdatedAt}
	case r.TrustEntry != nil:
		e := r.TrustEntry
		v = trustRec{e.ID, e.Scope, e.ScopeID, e.Name, e.Kind, e.Key, e.Issuer, e.Subject, e.CreatedBy, e.CreatedAt}
	default:
		return nil, fmt.Errorf("empty dump record")
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(line{Kind: r.Kind(), Data: data})
	return append(b, '\n'), err
}

// v1Kinds are the kinds format 1 has.
var v1Kinds = map[string]bool{
	chartctl.DumpUser: true, chartctl.DumpAPIKey: true, chartctl.DumpOAuthClient: true, chartctl.DumpOrganization: true,
	chartctl.DumpRepository: true, chartctl.DumpTeam: true, chartctl.DumpMember: true, chartctl.DumpChartVersion: true,
}

// v3Kinds are the kinds format 3 added.
var v3Kinds = map[string]bool{chartctl.DumpGrant: true, chartctl.DumpRobot: true, chartctl.DumpPublisher: true}

// v5Kinds are the kinds format 5 added.
var v5Kinds = map[string]bool{chartctl.DumpSCIMToken: true, chartctl.DumpSCIMGroup: true}

// v7Kinds are the kinds format 7 added.
var v7Kinds = map[string]bool{chartctl.DumpTrustEntry: true}

// v8Kinds are the kinds format 8 added.
var v8Kinds = map[string]bool{chartctl.DumpPolicy: true}

// v9Kinds are the kinds format 9 added.
var v9Kinds = map[string]bool{chartctl.DumpReplication: true}

// decodeRecord reads one line of records.jsonl of a backup of format
// version.
func decodeRecord(b []byte, version int) (chartctl.DumpRecord, error) {
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return chartctl.DumpRecord{}, err
	}
	if version == 1 && !v1Kinds[l.Kind] {
		return chartctl.DumpRecord{}, fmt.Errorf("record kind %q is not one of format 1", l.Kind)
	}
	if version < 3 && v3Kinds[l.Kind] || version < 5 && v5Kinds[l.Kind] || version < 7 && v7Kinds[l.Kind] || version < 8 && v8Kinds[l.Kind] || version < 9 && v9Kinds[l.Kind] {
		return chartctl.DumpRecord{}, fmt.Errorf("record kind %q is not one of format %d", l.Kind, version)
	}
	var (
		r   chartctl.DumpRecord
		err error
	)
	switch l.Kind {
	case chartctl.DumpUser:
		var v userRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.User = &chartctl.User{ID: v.ID, Email: v.Email, PasswordHash: v.PasswordHash, Admin: v.Admin, Disabled: v.Disabled,
				CreatedAt: v.CreatedAt, LastSeenAt: v.LastSeenAt, IDPGroups: v.IDPGroups}
			if v.Identity != nil {
				r.User.Identity = chartctl.Identity{Provider: v.Identity.Provider, Issuer: v.Identity.Issuer, Subject: v.Identity.Subject}
			}
		}
	case chartctl.DumpAPIKey:
		var v apiKeyRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			var sc chartctl.Scopes
			if sc, err = chartctl.NewScopes("scopes", v.Scopes); err == nil {
				r.APIKey = &chartctl.APIKey{ID: v.ID, UserID: v.UserID, Name: v.Name, Scopes: sc, Hash: v.Hash, CreatedAt: v.CreatedAt,
					LastUsedAt: v.LastUsedAt, ExpiresAt: v.ExpiresAt, Repositories: v.Repositories}
			}
		}
	case chartctl.DumpOAuthClient:
		var v oauthClientRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.OAuthClient = &chartctl.OAuthClient{ID: v.ID, Name: v.Name, RedirectURIs: v.RedirectURIs, Public: v.Public,
				SecretHash: v.SecretHash, CreatedAt: v.CreatedAt}
		}
	case chartctl.DumpOrganization:
		var v organizationRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.Organization = &chartctl.Organization{ID: v.ID, Name: v.Name, Description: v.Description, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt}
		}
	case chartctl.DumpRepository:
		var v repositoryRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.Repository = &chartctl.Repository{ID: v.ID, Name: v.Name, Description: v.Description, Organization: v.Organization,
				OwnerID: v.OwnerID, Visibility: chartctl.Visibility(v.Visibility), CreatedAt: v.CreatedAt, Mirror: v.Mirror.domain(),
				Proxy: v.Proxy.domain(), IndexFormat: chartctl.IndexFormat(v.IndexFormat).OrYAML(), ArtifactHub: v.ArtifactHub.domain()}
		}
	case chartctl.DumpTeam:
		var v teamRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.Team = &chartctl.Team{ID: v.ID, Name: v.Name, Organization: v.Organization, Description: v.Description, CreatedAt: v.CreatedAt, IDPGroups: v.IDPGroups}
		}
	case chartctl.DumpMember:
		var v memberRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.Member = &chartctl.Member{ID: v.ID, Team: v.Team, Email: v.Email, Role: chartctl.Role(v.Role), AddedAt: v.AddedAt}
		}
	case chartctl.DumpChartVersion:
		var v chartVersionRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.ChartVersion = &chartctl.ChartVersion{Repository: v.Repository, Name: v.Name, Version: v.Version, AppVersion: v.AppVersion,
				Description: v.Description, Keywords: v.Keywords, Digest: v.Digest, ContentDigest: v.ContentDigest, Size: v.Size,
				ProvDigest: v.ProvDigest, ProvSize: v.ProvSize, CreatedAt: v.CreatedAt, Metadata: v.Metadata, IndexEntry: v.IndexEntry,
				Downloads: v.Downloads, LastDownloadedAt: v.LastDownload, Verification: v.Verification.domain(), HeldUntil: v.HeldUntil,
				Images: v.Images.domain(), Policy: v.Policy.domain(), IndexEntryJSON: v.IndexEntryJSON}
		}
	case chartctl.DumpQuota:
		var v quotaRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.Quota = &chartctl.ScopedQuota{Scope: v.Scope, Name: v.Name, Quota: chartctl.Quota{MaxBytes: v.MaxBytes, MaxVersions: v.MaxVersions}}
		}
	case chartctl.DumpRetention:
		var v retentionRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			p := chartctl.RetentionPolicy{KeepLatest: v.KeepLatest, KeepMatching: v.KeepMatching, Schedule: v.Schedule}
			if p.KeepPushedWithin, err = parseDuration("keep_pushed_within", v.KeepPushedWithin); err != nil {
				break
			}
			if p.KeepDownloadedWithin, err = parseDuration("keep_downloaded_within", v.KeepDownloadedWithin); err != nil {
				break
			}
			if p.DeletePrereleasesAfter, err = parseDuration("delete_prereleases_after", v.DeletePrereleasesAfter); err != nil {
				break
			}
			r.Retention = &chartctl.RepositoryRetention{Repository: v.Repository, Policy: p}
		}
	case chartctl.DumpPolicy:
		var v policyRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			p := chartctl.Policy{RequireSignature: v.RequireSignature, Lint: v.Lint, ValuesSchema: v.ValuesSchema,
				RequiredFields: v.RequiredFields, NamePattern: v.NamePattern, AllowPrerelease: v.AllowPrerelease,
				MonotonicVersions: v.MonotonicVersions, ImagesPinned: v.ImagesPinned, MaxSize: v.MaxSize, DenyFiles: v.DenyFiles, UpdatedAt: v.UpdatedAt}
			if p.HoldWindow, err = time.ParseDuration(v.HoldWindow); err != nil {
				err = fmt.Errorf("hold_window: %w", err)
				break
			}
			r.Policy = &chartctl.ScopedPolicy{Scope: v.Scope, ID: v.ID, Policy: p}
		}
	case chartctl.DumpReplication:
		var v replicationRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			x := &chartctl.Replication{ID: v.ID, Name: v.Name, Source: v.Source, SourceID: v.SourceID, Target: v.Target, Username: v.Username,
				Password: v.SealedPassword, Filter: chartctl.ReplicationFilter{Name: v.FilterName, Version: v.FilterVersion},
				CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt, LastSuccessAt: v.LastSuccessAt, LastError: v.LastError}
			for _, o := range v.On {
				x.On = append(x.On, chartctl.ReplicationOp(o))
			}
			r.Replication = x
		}
	case chartctl.DumpWebhook:
		var v webhookRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.Webhook = &chartctl.Webhook{ID: v.ID, Repository: v.Repository, RepositoryID: v.RepositoryID, Organization: v.Organization, URL: v.URL, Events: v.Events,
				Active: v.Active, Secret: v.SealedSecret, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt, DisabledReason: v.DisabledReason}
		}
	case chartctl.DumpOCIBlobLink:
		var v ociBlobLinkRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.OCIBlobLink = &chartctl.OCIBlobLink{Name: v.Name, Digest: v.Digest, Size: v.Size, LinkedAt: v.LinkedAt}
		}
	case chartctl.DumpOCIManifest:
		var v ociManifestRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			m := &chartctl.OCIManifest{Name: v.Name, Digest: v.Digest, MediaType: v.MediaType, ArtifactType: v.ArtifactType,
				Subject: v.Subject, Annotations: v.Annotations, Blobs: v.Blobs, Manifests: v.Manifests, Content: v.Content, CreatedAt: v.CreatedAt}
			if v.Chart != nil {
				m.Chart = &chartctl.OCIChartRef{Repository: v.Chart.Repository, Name: v.Chart.Name, Version: v.Chart.Version}
				m.Alternate = v.Alternate
			}
			r.OCIManifest = m
		}
	case chartctl.DumpOCITag:
		var v ociTagRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.OCITag = &chartctl.OCITag{Name: v.Name, Tag: v.Tag, Digest: v.Digest}
		}
	case chartctl.DumpAuditEntry:
		var v auditRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			a := v.Actor
			r.AuditEntry = &chartctl.AuditEntry{ID: v.ID, Time: v.Time, Action: v.Action, Target: v.Target,
				Outcome: chartctl.Outcome(v.Outcome), Organization: v.Organization, Actor: chartctl.Actor{UserID: a.UserID, Email: a.Email,
					CredentialID: a.CredentialID, CredentialKind: a.CredentialKind, Robot: a.Robot, Publisher: a.Publisher,
					ClientIP: a.ClientIP, RequestID: a.RequestID}}
		}
	case chartctl.DumpGrant:
		var v grantRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.Grant = &chartctl.Grant{ID: v.ID, RepositoryID: v.RepositoryID, Repository: v.Repository, Kind: chartctl.GrantKind(v.Kind),
				SubjectID: v.SubjectID, Subject: v.Subject, Role: chartctl.RepoRole(v.Role), CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt}
		}
	case chartctl.DumpRobot:
		var v robotRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			var perms chartctl.RobotPermissions
			if perms, err = chartctl.ParseRobotPermissions("permissions", v.Permissions); err == nil {
				r.Robot = &chartctl.Robot{ID: v.ID, OrganizationID: v.OrganizationID, Organization: v.Organization, Name: v.Name,
					Description: v.Description, Repositories: v.Repositories, Permissions: perms, SecretHash: v.SecretHash,
					PreviousSecretHash: v.PreviousSecretHash, PreviousSecretExpiresAt: v.PreviousSecretExpiresAt, Disabled: v.Disabled,
					ExpiresAt: v.ExpiresAt, LastUsedAt: v.LastUsedAt, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt}
			}
		}
	case chartctl.DumpPublisher:
		var v publisherRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.Publisher = &chartctl.TrustedPublisher{ID: v.ID, RobotID: v.RobotID, Issuer: v.Issuer, Audience: v.Audience,
				Claims: v.Claims, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt}
		}
	case chartctl.DumpSCIMToken:
		var v scimTokenRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.SCIMToken = &chartctl.SCIMToken{ID: v.ID, Name: v.Name, Hash: v.Hash, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt, LastUsedAt: v.LastUsedAt}
		}
	case chartctl.DumpSCIMGroup:
		var v scimGroupRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.SCIMGroup = &chartctl.SCIMGroup{ID: v.ID, DisplayName: v.DisplayName, ExternalID: v.ExternalID, Members: v.Members,
				CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt}
		}
	case chartctl.DumpTrustEntry:
		var v trustRec
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.TrustEntry = &chartctl.TrustEntry{ID: v.ID, Scope: v.Scope, ScopeID: v.ScopeID, Name: v.Name, Kind: v.Kind,
				Key: v.Key, Issuer: v.Issuer, Subject: v.Subject, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt}
		}
	default:
		return r, fmt.Errorf("unknown record kind %q", l.Kind)
	}
	return r, err
}
