package chartctl

import (
	"context"
	"encoding/json"
	"io"
	"regexp"
	"time"
)

// User is an account. Users sign in to the dashboard with a password and
// call the API with API keys or OAuth access tokens.
type User struct {
	ID    string
	Email string
	// PasswordHash is the encoded password hash; "" when the user cannot
	// sign in with a password (a CI service account).
	PasswordHash string
	Admin        bool
	// Disabled users cannot sign in, and none of their credentials is
	// accepted.
	Disabled  bool
	CreatedAt time.Time
	// LastSeenAt is when the user last signed in to the dashboard, nil if
	// never.
	LastSeenAt *time.Time
	// Identity is the identity provider account the user signs in with;
	// the zero value is a local account (password, or none for a CI
	// service account).
	Identity Identity
	// IDPGroups are the groups the identity provider listed at the user's
	// last sign-in (empty when it listed none): the refresh of an OAuth
	// grant sets bound-team memberships from them again.
	IDPGroups []string
}

// Identity providers a user may be bound to (CONTRACT §18 "Sign-in").
const (
	ProviderLocal = "local"
	ProviderOIDC  = "oidc"
	ProviderLDAP  = "ldap"
	ProviderSCIM  = "scim"
)

// Identity binds a user to an account of an identity provider. A bound
// user is found by (Provider, Issuer, Subject), never by email alone, so
// an email reused at the provider cannot take over the account.
type Identity struct {
	// Provider is ProviderOIDC, ProviderLDAP or ProviderSCIM; "" (or
	// ProviderLocal) is a local account, and then the other fields are
	// empty.
	Provider string
	// Issuer names the provider's instance: the OIDC issuer URL.
	Issuer string
	// Subject is the provider's stable ID of the account (OIDC sub).
	Subject string
}

// Local reports whether the identity is a local account.
func (i Identity) Local() bool { return i.Provider == "" || i.Provider == ProviderLocal }

// ProviderName is Provider with "" spelled ProviderLocal.
func (i Identity) ProviderName() string {
	if i.Local() {
		return ProviderLocal
	}
	return i.Provider
}

// UserUpdate lists the changes UpdateUser makes; nil fields stay as they
// are.
type UserUpdate struct {
	Disabled     *bool
	Admin        *bool
	PasswordHash *string
	// Email changes the user's email (an identity provider's account
	// whose address changed); ECONFLICT if another user has it.
	Email *string
	// Identity binds the user to an identity provider's account;
	// ECONFLICT if another user is bound to it.
	Identity *Identity
	// IDPGroups replaces the groups of the user's last IdP sign-in.
	IDPGroups *[]string
}

// Organization groups teams and repositories; a user's role in it is the
// highest over their teams in it, and owner for the user who created it.
type Organization struct {
	ID          string
	Name        string
	Description string
	// CreatedBy is the ID of the user who created it; that user is an owner.
	CreatedBy string
	CreatedAt time.Time
}

// Repository is a named collection of chart versions, also served as a Helm
// repository.
type Repository struct {
	ID          string
	Name        string
	Description string
	// Organization is the owning organization's name, "" for a personal
	// repository.
	Organization string
	// OwnerID is the creating user's ID; for a personal repository that
	// user owns it.
	OwnerID    string
	Visibility Visibility
	// IndexFormat is how the repository's Helm index is written;
	// repositories stored before it existed read as IndexYAML.
	IndexFormat IndexFormat
	CreatedAt   time.Time
	// Mirror is set for a read-only mirror of an upstream Helm
	// repository (see MirrorStore), nil for an ordinary repository.
	Mirror *Mirror
	// ArtifactHub is the repository's artifacthub-repo.yml, nil when
	// its admins set none.
	ArtifactHub *ArtifactHubRepo
	// Proxy is set for a read-only pull-through cache of an upstream
	// (see Proxy), nil for an ordinary repository. A repository is never
	// both a mirror and a proxy.
	Proxy *Proxy
}

// ArtifactHubRepo is what a repository's artifacthub-repo.yml says to
// Artifact Hub (https://artifacthub.io/docs/topics/repositories/): the
// Artifact Hub repository it publishes to (verified publisher), the
// owners who may claim it, and the packages Artifact Hub should not
// index.
type ArtifactHubRepo struct {
	// RepositoryID is the Artifact Hub repository's ID (a UUID), "" when
	// not set.
	RepositoryID string
	Owners       []ArtifactHubOwner
	Ignore       []ArtifactHubIgnore
}

// ArtifactHubOwner is one owner of artifacthub-repo.yml.
type ArtifactHubOwner struct {
	Name  string
	Email string
}

// ArtifactHubIgnore is one package Artifact Hub should not index: Name
// exactly, and of its versions those Version (a regular expression)
// matches, every version when "".
type ArtifactHubIgnore struct {
	Name    string
	Version string
}

// Empty reports whether a sets nothing (nil counts as empty).
func (a *ArtifactHubRepo) Empty() bool {
	return a == nil || (a.RepositoryID == "" && len(a.Owners) == 0 && len(a.Ignore) == 0)
}

// ReadOnly reports whether only the server itself writes chart versions
// into r: a mirror's syncs or a proxy's fills.
func (r *Repository) ReadOnly() bool { return r.Mirror != nil || r.Proxy != nil }

// ChartVersion is one uploaded chart archive.
type ChartVersion struct {
	Repository string
	// RepositoryID, when set on a version being stored, is the ID of the
	// repository the upload was authorized against: the store refuses the
	// version if the repository of that name has another ID by then (it
	// was deleted and re-created while the upload was in flight). Stores
	// do not keep it.
	RepositoryID string
	Name         string
	Version      string
	AppVersion   string
	Description  string
	Keywords     []string
	// Digest is "sha256:<hex>" of the archive bytes; also its blob address.
	Digest string
	// ContentDigest is "sha256:<hex>" over the chart's files (paths and
	// bytes, see chart.Chart.ContentDigest): equal for two archives of the
	// same chart whose gzip or tar bytes differ. "" for versions stored
	// before it was recorded.
	ContentDigest string
	// Size of the archive in bytes.
	Size int64
	// ProvDigest is the blob digest of the provenance file, "" if none.
	ProvDigest string
	// ProvSize is the provenance file's size in bytes (0 if none).
	ProvSize int64
	// Downloads counts the archive's downloads by every protocol, as of the
	// last flush of the counters; LastDownloadedAt is the latest, nil if
	// never. Stores fill both on reads; writes ignore them.
	Downloads        int64
	LastDownloadedAt *time.Time
	CreatedAt        time.Time
	// Metadata is the chart's Chart.yaml as JSON, with Helm's field names;
	// the Helm index is rendered from it.
	Metadata json.RawMessage
	// IndexEntry is the version's entry of the Helm index, rendered once
	// when it was uploaded so the index is never re-rendered from the
	// store. Stores keep it as opaque bytes; empty means "render it".
	IndexEntry []byte
	// IndexEntryJSON is IndexEntry converted to the JSON index's object
	// (helmindex.EntryJSON), stored beside it so a JSON index loads
	// without parsing YAML (issue #32). Stores keep it with IndexEntry
	// (a write of IndexEntry without it clears it); empty means "convert
	// IndexEntry", as for versions stored before it existed.
	IndexEntryJSON []byte
	// Verification is the version's verification record (issue #30), nil
	// until it was first verified. PutChartVersion stores it as given
	// (a restore); a replaced archive drops it.
	Verification *Verification
	// HeldUntil, when set, says the version is held (CONTRACT §18, issue
	// #30): stored under a require_signature policy without a verified
	// signature, it is in no index, list or search and pullable by nobody
	// until its signature verifies (ReleaseChartVersion clears it) or
	// until this time, when the hold sweep deletes it.
	HeldUntil *time.Time
	// Images is the record of the images the version deploys (issue
	// #33), nil while pending. PutChartVersion stores it as given (a
	// restore); a replaced archive drops it.
	Images *Images
	// Policy is what the admission policy says of the version (issue
	// #30): the findings kept at push and, after a policy change, the
	// rules it breaks now. Nil when nothing was recorded.
	// PutChartVersion stores it as given; a replaced archive takes the
	// new upload's.
	Policy *VersionPolicy
}

// Held reports whether the version is held.
func (cv *ChartVersion) Held() bool { return cv.HeldUntil != nil }

// Team is a group of members inside an organization.
type Team struct {
	ID           string
	Name         string
	Organization string
	Description  string
	// IDPGroups binds the team to identity provider groups (names or
	// ids): when set, the IdP alone decides its members (CONTRACT §18
	// decision 7).
	IDPGroups   []string
	MemberCount int
	CreatedAt   time.Time
}

// Bound reports whether the team is bound to identity provider groups.
func (t *Team) Bound() bool { return len(t.IDPGroups) > 0 }

// Member is a team membership, recorded by email: it takes effect for the
// account with that email whenever that account exists.
type Member struct {
	ID      string
	Team    string
	Email   string
	Role    Role
	AddedAt time.Time
}

// APIKey is a long-lived credential. Only a hash of its value is stored.
type APIKey struct {
	ID         string
	UserID     string
	Name       string
	Scopes     Scopes
	Hash       []byte
	CreatedAt  time.Time
	LastUsedAt *time.Time
	ExpiresAt  *time.Time
	// Repositories, when not empty, limits the key to the repositories
	// whose names match one of these patterns (MatchRepo), on top of its
	// scopes.
	Repositories []string
}

// Expired reports whether the key has expired at now.
func (k *APIKey) Expired(now time.Time) bool {
	return k.ExpiresAt != nil && !now.Before(*k.ExpiresAt)
}

// ChartFilter narrows a chart version listing.
type ChartFilter struct {
	// Name, if set, keeps only versions of that chart.
	Name string
	// Version, if set, keeps only that version.
	Version string
	// Latest keeps only the newest version of each chart.
	Latest bool
	// IncludeHeld lists held versions too; without it they are left out
	// (ChartVersion.HeldUntil).
	IncludeHeld bool
}

// Store keeps the service's metadata. Implementations must be safe for
// concurrent use; every method is atomic.
type Store interface {
	// CreateUser stores u, filling ID and CreatedAt when empty.
	// Returns ECONFLICT if the email is taken, or u.Identity is bound to
	// another user.
	CreateUser(ctx context.Context, u *User) error
	// User returns the user with id. Returns ENOTFOUND if none.
	User(ctx context.Context, id string) (*User, error)
	// UserByEmail returns the user with email (case-insensitive).
	// Returns ENOTFOUND if none.
	UserByEmail(ctx context.Context, email string) (*User, error)
	// UserByIdentity returns the user bound to the identity provider's
	// account (provider, issuer, subject). Returns ENOTFOUND if none.
	UserByIdentity(ctx context.Context, id Identity) (*User, error)
	// UserCount returns the number of users.
	UserCount(ctx context.Context) (int, error)
	// Users returns every user, by email.
	Users(ctx context.Context) ([]*User, error)
	// UpdateUser applies upd to the user with id and returns the result.
	// Disabling a user ends, in the same transaction, every credential of
	// theirs: API keys are deleted, dashboard sessions ended, OAuth codes
	// and grants revoked. Returns ENOTFOUND, and ECONFLICT when the change
	// would leave no enabled admin.
	UpdateUser(ctx context.Context, id string, upd UserUpdate) (*User, error)
	// DeleteUser deletes the user with id, their memberships and, as
	// disabling does, every credential of theirs. Repositories and
	// organizations they created stay. Returns ENOTFOUND, and ECONFLICT
	// when the user is the last enabled admin.
	DeleteUser(ctx context.Context, id string) error
	// TouchUser records that the user was seen (signed in) at t.
	TouchUser(ctx context.Context, id string, t time.Time) error

	// CreateAPIKey stores k, filling ID and CreatedAt when empty.
	// Returns ENOTFOUND if the user does not exist.
	CreateAPIKey(ctx context.Context, k *APIKey) error
	// APIKeyByHash returns the key whose hash is h. Returns ENOTFOUND if none.
	APIKeyByHash(ctx context.Context, h []byte) (*APIKey, error)
	// APIKeys returns the user's keys, oldest first.
	APIKeys(ctx context.Context, userID string) ([]*APIKey, error)
	// DeleteAPIKey revokes the user's key id. Returns ENOTFOUND if the user
	// has no such key.
	DeleteAPIKey(ctx context.Context, userID, id string) error
	// TouchAPIKeys records last-used times for many keys in one write; keys
	// that no longer exist are skipped.
	TouchAPIKeys(ctx context.Context, used map[string]time.Time) error

	// CreateOrganization stores o, filling ID and CreatedAt when empty.
	// Returns ECONFLICT if the name is taken.
	CreateOrganization(ctx context.Context, o *Organization) error
	// Organization returns the organization named name. Returns ENOTFOUND.
	Organization(ctx context.Context, name string) (*Organization, error)
	// Organizations returns every organization, by name.
	Organizations(ctx context.Context) ([]*Organization, error)
	// OrgRoles returns the roles the user with this id and email holds, by
	// organization name: the highest over the teams where email is a member,
	// and owner where the user created the organization.
	OrgRoles(ctx context.Context, userID, email string) (map[string]Role, error)

	// CreateRepository stores r, filling ID and CreatedAt when empty,
	// with its mirror settings and state when r.Mirror is set.
	// Returns ECONFLICT if the name is taken, or was the name of a
	// repository of another owner deleted within the store's name grace
	// period; ENOTFOUND if r.Organization is set and does not exist.
	CreateRepository(ctx context.Context, r *Repository) error
	// Repository returns the repository named name. Returns ENOTFOUND.
	Repository(ctx context.Context, name string) (*Repository, error)
	// Repositories returns every repository, by name.
	Repositories(ctx context.Context) ([]*Repository, error)
	// UpdateRepository changes the fields u sets of the repository named
	// name (a nil field leaves that field as is) and returns it. Returns
	// ENOTFOUND, or EINVALID for an invalid visibility or index format.
	UpdateRepository(ctx context.Context, name string, u RepositoryUpdate) (*Repository, error)
	// DeleteRepository deletes the repository and all its chart versions,
	// returning the blob digests no longer referenced by any record, and
	// with them everything bound to the repository (CONTRACT §18 decision
	// 2): its webhooks and their deliveries, quota, usage, retention
	// policy and OCI upload sessions. Returns ENOTFOUND.
	DeleteRepository(ctx context.Context, name string) (orphans []string, err error)

	// PutChartVersion stores cv in its repository, whose blob (and
	// provenance blob, if any) must already be durable. If the version
	// exists with the same digest, or the same non-empty content digest,
	// it returns the stored record and created=false. If it exists with
	// other content it returns ECONFLICT, unless opts.Overwrite is set,
	// when it replaces the record (orphans then lists blobs no longer
	// referenced). A version SemVer-equal to another stored version of the
	// chart (build metadata and a leading "v" aside) is ECONFLICT naming
	// the stored one. Returns ENOTFOUND if the repository does not exist,
	// or if cv.RepositoryID is set and is not the repository's ID. With
	// opts.Manifest, the version's OCI manifest is stored in the same
	// transaction (see PutVersionOptions).
	PutChartVersion(ctx context.Context, cv *ChartVersion, opts PutVersionOptions) (stored *ChartVersion, created bool, orphans []string, err error)
	// ChartVersion returns one version. Returns ENOTFOUND.
	ChartVersion(ctx context.Context, repo, name, version string) (*ChartVersion, error)
	// ChartVersions returns the repository's versions matching f, ordered by
	// name, then by SemVer descending. Returns ENOTFOUND if the repository
	// does not exist.
	ChartVersions(ctx context.Context, repo string, f ChartFilter) ([]*ChartVersion, error)
	// ChartVersionPage returns the versions matching f from offset, at most
	// limit of them (all when limit < 0), in ChartVersions order, and how
	// many match in all. Returns ENOTFOUND if the repository does not exist.
	ChartVersionPage(ctx context.Context, repo string, f ChartFilter, offset, limit int) ([]*ChartVersion, int, error)
	// ChartTags returns the OCI tags of chart name's versions in repo
	// (VersionTag of each version) in lexical byte order after last (""
	// from the start), at most n of them (all when n < 0), and whether
	// more follow. It reads an index of tags, never the version records,
	// so a page costs the same at 300 and at 100,000 versions. Returns
	// ENOTFOUND if the repository does not exist. The page may be shared
	// with other callers: it must not be modified.
	ChartTags(ctx context.Context, repo, name, last string, n int) (tags []string, more bool, err error)
	// ChartNames returns every chart holding a version, as repository "/"
	// chart, sorted; its cost grows with the number of charts, not of
	// versions.
	ChartNames(ctx context.Context) ([]string, error)
	// DeleteChartVersion deletes one version and returns it, with the blob
	// digests no longer referenced. Returns ENOTFOUND.
	DeleteChartVersion(ctx context.Context, repo, name, version string) (deleted *ChartVersion, orphans []string, err error)
	// IndexEntries returns every version of the repository for its Helm
	// index, in no particular order: Name, Version, CreatedAt and
	// IndexEntry (with IndexEntryJSON when stored), or the full record
	// (Metadata set, IndexEntry empty) for a version stored without an
	// entry. Returns ENOTFOUND if the repository
	// does not exist.
	IndexEntries(ctx context.Context, repo string) ([]*ChartVersion, error)
	// IndexEntry returns one version as IndexEntries returns each. Returns
	// ENOTFOUND if the repository or the version does not exist.
	IndexEntry(ctx context.Context, repo, name, version string) (*ChartVersion, error)
	// IndexGeneration returns an opaque token of what IndexEntries returns
	// for the repository: a committed change to it (a version stored,
	// overwritten, deleted, held, released or re-signed) gives a token
	// never returned before, on every replica, and a repository deleted
	// and created again has new tokens too. "" means the store cannot say
	// (a repository not changed since it was restored or upgraded), which
	// matches nothing. It lets a process keep a rendered index across a
	// restart (helmindex's snapshots). Returns ENOTFOUND if the repository
	// does not exist.
	IndexGeneration(ctx context.Context, repo string) (string, error)
	// SetIndexEntriesJSON stores each version's IndexEntryJSON (Name,
	// Version, IndexEntry and IndexEntryJSON set) where the version still
	// holds exactly that IndexEntry: the backfill of versions stored before
	// JSON entries were kept. It changes no served byte (the JSON entry is
	// the conversion of the stored one), so it records no change. Versions
	// gone, held or re-rendered meanwhile are skipped; n counts those
	// stored. Returns ENOTFOUND if the repository does not exist.
	SetIndexEntriesJSON(ctx context.Context, repo string, cvs []*ChartVersion) (n int, err error)
	// BlobReferenced reports whether any record refers to the blob digest.
	BlobReferenced(ctx context.Context, digest string) (bool, error)

	// CreateTeam stores t, filling ID and CreatedAt when empty. Returns
	// ECONFLICT if the name is taken, ENOTFOUND if the organization does not
	// exist.
	CreateTeam(ctx context.Context, t *Team) error
	// Team returns the team named name, with MemberCount. Returns ENOTFOUND.
	Team(ctx context.Context, name string) (*Team, error)
	// Teams returns the teams of org ("" for all), by name.
	Teams(ctx context.Context, org string) ([]*Team, error)
	// SetTeamIDPGroups replaces the identity provider groups the team is
	// bound to (none: unbound) and returns the team. Returns ENOTFOUND.
	SetTeamIDPGroups(ctx context.Context, team string, groups []string) (*Team, error)
	// AddMember adds m to its team, filling ID and AddedAt when empty.
	// Returns ENOTFOUND if the team does not exist, ECONFLICT if the email
	// is already a member.
	AddMember(ctx context.Context, m *Member) error
	// Members returns the team's members, by email. Returns ENOTFOUND.
	Members(ctx context.Context, team string) ([]*Member, error)
	// Member returns one member of team, found by member ID or by email.
	// Returns ENOTFOUND.
	Member(ctx context.Context, team, idOrEmail string) (*Member, error)
	// UpdateMemberRole changes a member's role. Returns ENOTFOUND.
	UpdateMemberRole(ctx context.Context, team, idOrEmail string, role Role) (*Member, error)
	// RemoveMember removes a member. Returns ENOTFOUND.
	RemoveMember(ctx context.Context, team, idOrEmail string) error

	// WebhookStore: audit log, webhooks and their delivery queues. Every
	// mutating method above also writes the Change its context carries
	// (see Change) in the same transaction.
	WebhookStore
	// QuotaStore: quotas and usage, enforced by PutChartVersion.
	QuotaStore
	// DownloadStore: download counters, shown on chart versions.
	DownloadStore
	// RetentionStore: retention policies.
	RetentionStore
	// LeaseStore: leases that let one replica at a time run scheduled work.
	LeaseStore
	// MirrorStore: the settings and sync state of mirror repositories.
	MirrorStore
	// ReplicationStore: replications and their task queues.
	ReplicationStore
	// BlobClaimStore: blob deletion kept from racing commits that refer
	// to the same blob.
	BlobClaimStore
	// AccessStore: repository grants, robot accounts and trusted publishing.
	AccessStore
	// SCIMStore: SCIM bearer tokens and the groups a SCIM client pushes.
	SCIMStore
	// TrustStore: trust material and verification records.
	TrustStore
	PolicyStore
	// ImagesStore: the images each chart version deploys.
	ImagesStore
	// RenderedStore: what each chart archive renders, for diffs.
	RenderedStore

	// Close releases the store.
	Close() error
}

// Blob is an open stored blob.
type Blob interface {
	io.ReadSeekCloser
	// Size is the blob's length in bytes.
	Size() int64
}

// BlobWriter receives a new blob. Nothing is visible under its digest until
// Commit returns; Abort (or Commit) must always be called.
type BlobWriter interface {
	io.Writer
	// Digest is "sha256:<hex>" of what was written so far.
	Digest() string
	// Size is the number of bytes written so far.
	Size() int64
	// Commit makes the blob durable (fsync of file and directory) under its
	// digest and returns the digest. Committing bytes already stored is a
	// no-op that succeeds.
	Commit() (string, error)
	// Abort discards an uncommitted blob. It is safe after Commit.
	Abort() error
}

// BlobStore keeps content-addressed blobs (chart archives, provenance files).
type BlobStore interface {
	// Create starts a new blob.
	Create(ctx context.Context) (BlobWriter, error)
	// Open opens the blob with digest. Returns ENOTFOUND.
	Open(ctx context.Context, digest string) (Blob, error)
	// Delete removes the blob; deleting a missing blob succeeds.
	Delete(ctx context.Context, digest string) error
	// Walk calls fn for every stored blob digest.
	Walk(ctx context.Context, fn func(digest string) error) error
	// ModTime returns when the blob was last committed (committing bytes
	// already stored counts): garbage collection spares blobs younger than
	// its grace period, which another replica may be about to refer to.
	// Returns ENOTFOUND.
	ModTime(ctx context.Context, digest string) (time.Time, error)
}

var nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$`)

// ValidateName checks a repository, team or organization name: 1–63
// characters of a-z 0-9 - _ ., starting and ending with a letter or digit.
// Returns EINVALID naming param.
func ValidateName(param, name string) error {
	if name == "" {
		return Invalid(param, "%s is required.", param)
	}
	if !nameRE.MatchString(name) {
		return Invalid(param, "Invalid %s %q: use 1-63 characters of a-z, 0-9, '-', '_' and '.', starting and ending with a letter or digit.", param, name)
	}
	return nil
}

// IndexFormat is how a repository's Helm index (index.yaml) is written.
type IndexFormat string

const (
	// IndexJSON writes index.yaml as JSON: valid YAML that Helm ≥ 3.13
	// and Flux parse several times faster. New repositories' default.
	IndexJSON IndexFormat = "json"
	// IndexYAML writes index.yaml as Helm's own writer does; the format of
	// repositories created before formats existed.
	IndexYAML IndexFormat = "yaml"
)

// Valid reports whether f is a known format.
func (f IndexFormat) Valid() bool { return f == IndexJSON || f == IndexYAML }

// OrYAML is f, or IndexYAML when f is empty (a record stored before
// formats existed).
func (f IndexFormat) OrYAML() IndexFormat {
	if f == "" {
		return IndexYAML
	}
	return f
}

// InvalidIndexFormat is the EINVALID error for an unknown index format.
func InvalidIndexFormat(f IndexFormat) error {
	return Invalid("index_format", "Invalid index format %q: use json or yaml.", f)
}

// RepositoryUpdate are the changes UpdateRepository makes; nil fields are
// left as they are.
type RepositoryUpdate struct {
	Description *string
	Visibility  *Visibility
	IndexFormat *IndexFormat
	// ArtifactHub, when set, replaces the repository's Artifact Hub
	// metadata; an empty one removes it.
	ArtifactHub *ArtifactHubRepo
	// Proxy replaces the proxy settings of a proxy repository; EINVALID
	// (parameter "proxy") when the repository is not one.
	Proxy *Proxy
}
