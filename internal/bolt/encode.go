package bolt

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// The stored form of each record. They carry JSON tags of their own so the
// file format does not change when a domain struct is renamed or grows a
// field that is not stored.

type userRecord struct {
	ID           string     `json:"id"`
	Email        string     `json:"email"`
	PasswordHash string     `json:"password_hash,omitempty"`
	Admin        bool       `json:"admin,omitempty"`
	Disabled     bool       `json:"disabled,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	LastSeenAt   *time.Time `json:"last_seen_at,omitempty"`
	// Identity binds the user to an identity provider's account (schema
	// 9); absent for local accounts.
	Identity *identityRecord `json:"identity,omitempty"`
	// IDPGroups are the groups of the last IdP sign-in (schema 10).
	IDPGroups []string `json:"idp_groups,omitempty"`
}

type identityRecord struct {
	Provider string `json:"provider"`
	Issuer   string `json:"issuer,omitempty"`
	Subject  string `json:"subject"`
}

type apiKeyRecord struct {
	ID         string     `json:"id"`
	UserID     string     `json:"user_id"`
	Name       string     `json:"name"`
	Scopes     []string   `json:"scopes"`
	Hash       []byte     `json:"hash"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	// Repositories restricts the key to matching repositories (issue
	// #29); absent in older records, which are unrestricted.
	Repositories []string `json:"repositories,omitempty"`
}

type orgRecord struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	CreatedBy   string    `json:"created_by,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

type repoRecord struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description,omitempty"`
	Organization string `json:"organization,omitempty"`
	OwnerID      string `json:"owner_id,omitempty"`
	Visibility   string `json:"visibility"`
	// IndexFormat is "json" or "yaml"; records stored before it existed
	// lack it and read as yaml.
	IndexFormat string    `json:"index_format,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	// Mirror is set for a mirror repository (schema 5).
	Mirror *mirrorRecord `json:"mirror,omitempty"`
	// ArtifactHub is the repository's artifacthub-repo.yml; records
	// written before it existed lack it and read as none (no upgrade
	// needed).
	ArtifactHub *artifactHubRecord `json:"artifacthub,omitempty"`
	// Proxy is set for a proxy repository; records without it (all
	// before proxies existed) read as ordinary repositories, so no
	// upgrade step is needed.
	Proxy *proxyRecord `json:"proxy,omitempty"`
}

// artifactHubRecord is a repository's Artifact Hub metadata.
type artifactHubRecord struct {
	RepositoryID string                    `json:"repository_id,omitempty"`
	Owners       []artifactHubOwnerRecord  `json:"owners,omitempty"`
	Ignore       []artifactHubIgnoreRecord `json:"ignore,omitempty"`
}

type artifactHubOwnerRecord struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

type artifactHubIgnoreRecord struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// newArtifactHubRecord returns the record of a, nil when a is empty.
func newArtifactHubRecord(a *chartctl.ArtifactHubRepo) *artifactHubRecord {
	if a.Empty() {
		return nil
	}
	rec := &artifactHubRecord{RepositoryID: a.RepositoryID}
	for _, o := range a.Owners {
		rec.Owners = append(rec.Owners, artifactHubOwnerRecord{o.Name, o.Email})
	}
	for _, i := range a.Ignore {
		rec.Ignore = append(rec.Ignore, artifactHubIgnoreRecord{i.Name, i.Version})
	}
	return rec
}

func (r *artifactHubRecord) domain() *chartctl.ArtifactHubRepo {
	if r == nil {
		return nil
	}
	a := &chartctl.ArtifactHubRepo{RepositoryID: r.RepositoryID}
	for _, o := range r.Owners {
		a.Owners = append(a.Owners, chartctl.ArtifactHubOwner{Name: o.Name, Email: o.Email})
	}
	for _, i := range r.Ignore {
		a.Ignore = append(a.Ignore, chartctl.ArtifactHubIgnore{Name: i.Name, Version: i.Version})
	}
	return a
}

// proxyRecord is a proxy repository's settings. Password is sealed by
// the application (AES-GCM) before it reaches the store.
type proxyRecord struct {
	URL              string   `json:"url"`
	Username         string   `json:"username,omitempty"`
	Password         []byte   `json:"password,omitempty"`
	TTLSeconds       int64    `json:"ttl_seconds"`
	RetentionSeconds int64    `json:"retention_seconds,omitempty"`
	Include          []string `json:"include,omitempty"`
	Exclude          []string `json:"exclude,omitempty"`
}

func newProxyRecord(p *chartctl.Proxy) *proxyRecord {
	if p == nil {
		return nil
	}
	return &proxyRecord{URL: p.URL, Username: p.Username, Password: p.Password, TTLSeconds: int64(p.TTL / time.Second), RetentionSeconds: int64(p.Retention / time.Second),
		Include: p.Include, Exclude: p.Exclude}
}

func (p *proxyRecord) domain() *chartctl.Proxy {
	if p == nil {
		return nil
	}
	return (&chartctl.Proxy{URL: p.URL, Username: p.Username, Password: p.Password, TTL: time.Duration(p.TTLSeconds) * time.Second, Retention: time.Duration(p.RetentionSeconds) * time.Second,
		Include: p.Include, Exclude: p.Exclude}).Clone()
}

// mirrorRecord is a mirror's settings and sync state. Password is sealed
// by the application (AES-GCM) before it reaches the store.
type mirrorRecord struct {
	URL             string     `json:"url"`
	IntervalSeconds int64      `json:"interval_seconds"`
	Username        string     `json:"username,omitempty"`
	Password        []byte     `json:"password,omitempty"`
	Status          string     `json:"status"`
	LastSyncAt      *time.Time `json:"last_sync_at,omitempty"`
	LastAttemptAt   *time.Time `json:"last_attempt_at,omitempty"`
	Error           string     `json:"error,omitempty"`
}

type chartRecord struct {
	Repository  string   `json:"repository"`
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	AppVersion  string   `json:"app_version,omitempty"`
	Description string   `json:"description,omitempty"`
	Keywords    []string `json:"keywords,omitempty"`
	Digest      string   `json:"digest"`
	// ContentDigest is empty in records written before it was recorded.
	ContentDigest string          `json:"content_digest,omitempty"`
	Size          int64           `json:"size"`
	ProvDigest    string          `json:"prov_digest,omitempty"`
	ProvSize      int64           `json:"prov_size,omitempty"`
	CreatedAt     time.Time       `json:"created_at"`
	Metadata      json.RawMessage `json:"metadata,omitempty"`
	// IndexEntry is read from records written before entries moved to
	// chartIndexBucket; new records leave it empty.
	IndexEntry string `json:"index_entry,omitempty"`
	// Verification is the version's verification record (schema 10),
	// absent until it was verified.
	Verification *verificationRecord `json:"verification,omitempty"`
	// HeldUntil is set while the version is held (schema 15; see
	// chartHeldBucket), absent otherwise.
	HeldUntil *time.Time `json:"held_until,omitempty"`
	// Images is the version's image record (issue #33), absent while
	// pending.
	Images *imagesRecord `json:"images,omitempty"`
	// Policy is the version's admission verdict (schema 16), absent
	// until a policy recorded one.
	Policy *versionPolicyRecord `json:"policy,omitempty"`
}

// repoTombstoneRecord remembers who owned a deleted repository, so its
// name is not given to another owner during the name grace period.
type repoTombstoneRecord struct {
	OwnerID      string    `json:"owner_id,omitempty"`
	Organization string    `json:"organization,omitempty"`
	DeletedAt    time.Time `json:"deleted_at"`
}

type teamRecord struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	Organization string    `json:"organization"`
	Description  string    `json:"description,omitempty"`
	MemberCount  int       `json:"member_count"`
	CreatedAt    time.Time `json:"created_at"`
	// IDPGroups binds the team to identity provider groups (schema 10).
	IDPGroups []string `json:"idp_groups,omitempty"`
}

type memberRecord struct {
	ID      string    `json:"id"`
	Team    string    `json:"team"`
	Email   string    `json:"email"`
	Role    string    `json:"role"`
	AddedAt time.Time `json:"added_at"`
}

// encode returns v as JSON.
func encode(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	return b, nil
}

// decode parses a stored record. The returned value never aliases data,
// which bbolt owns only for the life of the transaction.
func decode[T any](data []byte) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(data, v); err != nil {
		return nil, fmt.Errorf("decode %T: %w", v, err)
	}
	return v, nil
}

func newUserRecord(u *chartctl.User) *userRecord {
	r := &userRecord{ID: u.ID, Email: u.Email, PasswordHash: u.PasswordHash, Admin: u.Admin, Disabled: u.Disabled, CreatedAt: u.CreatedAt, LastSeenAt: u.LastSeenAt, IDPGroups: u.IDPGroups}
	if !u.Identity.Local() {
		r.Identity = &identityRecord{Provider: u.Identity.Provider, Issuer: u.Identity.Issuer, Subject: u.Identity.Subject}
	}
	return r
}

func (r *userRecord) domain() *chartctl.User {
	u := &chartctl.User{ID: r.ID, Email: r.Email, PasswordHash: r.PasswordHash, Admin: r.Admin, Disabled: r.Disabled, CreatedAt: r.CreatedAt, LastSeenAt: r.LastSeenAt, IDPGroups: r.IDPGroups}
	if r.Identity != nil {
		u.Identity = chartctl.Identity{Provider: r.Identity.Provider, Issuer: r.Identity.Issuer, Subject: r.Identity.Subject}
	}
	return u
}

func newAPIKeyRecord(k *chartctl.APIKey) *apiKeyRecord {
	return &apiKeyRecord{
		ID: k.ID, UserID: k.UserID, Name: k.Name, Scopes: k.Scopes.Strings(),
		Hash: k.Hash, CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, ExpiresAt: k.ExpiresAt,
		Repositories: k.Repositories,
	}
}

func (r *apiKeyRecord) domain() *chartctl.APIKey {
	scopes := make(chartctl.Scopes, len(r.Scopes))
	for i, s := range r.Scopes {
		scopes[i] = chartctl.Scope(s)
	}
	return &chartctl.APIKey{
		ID: r.ID, UserID: r.UserID, Name: r.Name, Scopes: scopes,
		Hash: r.Hash, CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt, ExpiresAt: r.ExpiresAt,
		Repositories: r.Repositories,
	}
}

func newOrgRecord(o *chartctl.Organization) *orgRecord {
	return &orgRecord{ID: o.ID, Name: o.Name, Description: o.Description, CreatedBy: o.CreatedBy, CreatedAt: o.CreatedAt}
}

func (r *orgRecord) domain() *chartctl.Organization {
	return &chartctl.Organization{ID: r.ID, Name: r.Name, Description: r.Description, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt}
}

func newRepoRecord(r *chartctl.Repository) *repoRecord {
	rec := &repoRecord{
		ID: r.ID, Name: r.Name, Description: r.Description, Organization: r.Organization,
		OwnerID: r.OwnerID, Visibility: string(r.Visibility), IndexFormat: string(r.IndexFormat.OrYAML()), CreatedAt: r.CreatedAt,
		ArtifactHub: newArtifactHubRecord(r.ArtifactHub),
	}
	if m := r.Mirror; m != nil {
		rec.Mirror = &mirrorRecord{}
		rec.Mirror.setSettings(m.MirrorSettings)
		rec.Mirror.setState(m.MirrorState)
	}
	rec.Proxy = newProxyRecord(r.Proxy)
	return rec
}

func (m *mirrorRecord) setSettings(s chartctl.MirrorSettings) {
	m.URL, m.IntervalSeconds, m.Username, m.Password = s.URL, int64(s.Interval/time.Second), s.Username, s.Password
}

func (m *mirrorRecord) setState(st chartctl.MirrorState) {
	m.Status, m.LastSyncAt, m.LastAttemptAt, m.Error = string(st.Status), utcp(st.LastSyncAt), utcp(st.LastAttemptAt), st.Error
}

func utcp(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.UTC()
	return &v
}

func (r *repoRecord) domain() *chartctl.Repository {
	out := &chartctl.Repository{
		ID: r.ID, Name: r.Name, Description: r.Description, Organization: r.Organization,
		OwnerID: r.OwnerID, Visibility: chartctl.Visibility(r.Visibility),
		IndexFormat: chartctl.IndexFormat(r.IndexFormat).OrYAML(), CreatedAt: r.CreatedAt,
		ArtifactHub: r.ArtifactHub.domain(),
	}
	if m := r.Mirror; m != nil {
		out.Mirror = &chartctl.Mirror{
			MirrorSettings: chartctl.MirrorSettings{URL: m.URL, Interval: time.Duration(m.IntervalSeconds) * time.Second,
				Username: m.Username, Password: append([]byte(nil), m.Password...)},
			MirrorState: chartctl.MirrorState{Status: chartctl.MirrorStatus(m.Status), LastSyncAt: m.LastSyncAt,
				LastAttemptAt: m.LastAttemptAt, Error: m.Error},
		}
		if len(m.Password) == 0 {
			out.Mirror.Password = nil
		}
	}
	out.Proxy = r.Proxy.domain()
	return out
}

func newChartRecord(cv *chartctl.ChartVersion) *chartRecord {
	return &chartRecord{
		Repository: cv.Repository, Name: cv.Name, Version: cv.Version, AppVersion: cv.AppVersion,
		Description: cv.Description, Keywords: cv.Keywords, Digest: cv.Digest, ContentDigest: cv.ContentDigest,
		Size: cv.Size, ProvDigest: cv.ProvDigest, ProvSize: cv.ProvSize, CreatedAt: cv.CreatedAt, Metadata: cv.Metadata,
		Verification: newVerificationRecord(cv.Verification), HeldUntil: utcPtr(cv.HeldUntil), Images: newImagesRecord(cv.Images),
		Policy: newVersionPolicyRecord(cv.Policy),
	}
}

func (r *chartRecord) domain() *chartctl.ChartVersion {
	return &chartctl.ChartVersion{
		Repository: r.Repository, Name: r.Name, Version: r.Version, AppVersion: r.AppVersion,
		Description: r.Description, Keywords: r.Keywords, Digest: r.Digest, ContentDigest: r.ContentDigest,
		Size: r.Size, ProvDigest: r.ProvDigest, ProvSize: r.ProvSize, CreatedAt: r.CreatedAt, Metadata: r.Metadata,
		IndexEntry: []byte(r.IndexEntry), Verification: r.Verification.domain(), HeldUntil: utcPtr(r.HeldUntil), Images: r.Images.domain(),
		Policy: r.Policy.domain(),
	}
}

func newTeamRecord(t *chartctl.Team) *teamRecord {
	return &teamRecord{
		ID: t.ID, Name: t.Name, Organization: t.Organization, Description: t.Description,
		MemberCount: t.MemberCount, CreatedAt: t.CreatedAt, IDPGroups: t.IDPGroups,
	}
}

func (r *teamRecord) domain() *chartctl.Team {
	return &chartctl.Team{
		ID: r.ID, Name: r.Name, Organization: r.Organization, Description: r.Description,
		MemberCount: r.MemberCount, CreatedAt: r.CreatedAt, IDPGroups: r.IDPGroups,
	}
}

func newMemberRecord(m *chartctl.Member) *memberRecord {
	return &memberRecord{ID: m.ID, Team: m.Team, Email: m.Email, Role: string(m.Role), AddedAt: m.AddedAt}
}

func (r *memberRecord) domain() *chartctl.Member {
	return &chartctl.Member{ID: r.ID, Team: r.Team, Email: r.Email, Role: chartctl.Role(r.Role), AddedAt: r.AddedAt}
}
