package chartctl

import "context"

// DumpRecord is one record of a store's logical dump: exactly one field is
// set. Dumps are engine-neutral: a dump of one engine loads into another
// through the Store, OAuthStore and OCIStore methods (internal/dump), and
// internal/backup writes them as an archive.
//
// A dump holds everything a store keeps that is not short-lived or derived
// (the list kept beside the interfaces, and checked by a test, is
// DumpCoverage). Left out, on purpose: OAuth codes, tokens and grants and
// dashboard sessions (people sign in again), OCI upload sessions in
// progress, webhook deliveries and their events (a restored server must
// not re-send old events; see docs/backup.md), leases, rate-limit windows,
// the names of recently deleted repositories and organizations, rendered
// chart pages, usage counters (derived from the chart versions), the ACME
// cache, and the credentials exchanged for trusted publishers' OIDC
// tokens and the token IDs already exchanged (they last minutes: a CI job
// exchanges its token again).
type DumpRecord struct {
	User         *User
	APIKey       *APIKey
	OAuthClient  *OAuthClient
	Organization *Organization
	Repository   *Repository
	Team         *Team
	Member       *Member
	// ChartVersion carries its Metadata, IndexEntry and download counter
	// (Downloads, LastDownloadedAt).
	ChartVersion *ChartVersion
	Quota        *ScopedQuota
	Retention    *RepositoryRetention
	// Webhook carries its secret sealed, as stored (CONTRACT §12).
	Webhook     *Webhook
	OCIBlobLink *OCIBlobLink
	OCIManifest *OCIManifest
	OCITag      *OCITag
	AuditEntry  *AuditEntry
	// Grant is a repository grant, bound to its repository and subject
	// by ID.
	Grant *Grant
	// Robot carries its secret hashes, current and previous, so a
	// restored robot keeps working with the secret it had.
	Robot     *Robot
	Publisher *TrustedPublisher
	// SCIMToken carries its hash, so a restored server keeps accepting
	// the identity provider's token; SCIMGroup its members by user ID.
	SCIMToken *SCIMToken
	SCIMGroup *SCIMGroup
	// TrustEntry is bound to its repository or organization by ID.
	TrustEntry *TrustEntry
	// Policy is an admission policy, bound to its repository or
	// organization by ID.
	Policy *ScopedPolicy
	// Replication carries its target's password sealed, as stored, and
	// is bound to its source repository by ID; its pending tasks are
	// in-flight work and stay behind.
	Replication *Replication
}

// ScopedQuota is the quota of one repository or organization.
type ScopedQuota struct {
	// Scope is QuotaRepository or QuotaOrganization.
	Scope string
	Name  string
	Quota Quota
}

// RepositoryRetention is the retention policy of one repository.
type RepositoryRetention struct {
	Repository string
	Policy     RetentionPolicy
}

// OCITag is one tag of an OCI repository name, pointing at a manifest.
type OCITag struct {
	Name   string
	Tag    string
	Digest string
}

// Dump record kinds, as DumpRecord.Kind names them.
const (
	DumpUser         = "user"
	DumpAPIKey       = "api_key"
	DumpOAuthClient  = "oauth_client"
	DumpOrganization = "organization"
	DumpRepository   = "repository"
	DumpTeam         = "team"
	DumpMember       = "member"
	DumpChartVersion = "chart_version"
	DumpQuota        = "quota"
	DumpRetention    = "retention_policy"
	DumpWebhook      = "webhook"
	DumpOCIBlobLink  = "oci_blob_link"
	DumpOCIManifest  = "oci_manifest"
	DumpOCITag       = "oci_tag"
	DumpAuditEntry   = "audit_entry"
	DumpGrant        = "grant"
	DumpRobot        = "robot"
	DumpPublisher    = "trusted_publisher"
	DumpSCIMToken    = "scim_token"
	DumpSCIMGroup    = "scim_group"
	DumpTrustEntry   = "trust_entry"
	DumpPolicy       = "admission_policy"
	DumpReplication  = "replication"
)

// DumpKinds lists the record kinds in the order an Exporter sends them.
var DumpKinds = []string{
	DumpUser, DumpAPIKey, DumpOAuthClient, DumpOrganization, DumpRepository, DumpTeam, DumpMember,
	DumpGrant, DumpRobot, DumpPublisher, DumpSCIMToken, DumpSCIMGroup, DumpTrustEntry, DumpChartVersion, DumpQuota, DumpRetention, DumpPolicy, DumpReplication, DumpWebhook, DumpOCIBlobLink, DumpOCIManifest, DumpOCITag,
	DumpAuditEntry,
}

// Kind names the record's kind (one of DumpKinds), "" for an empty record.
func (r DumpRecord) Kind() string {
	switch {
	case r.User != nil:
		return DumpUser
	case r.APIKey != nil:
		return DumpAPIKey
	case r.OAuthClient != nil:
		return DumpOAuthClient
	case r.Organization != nil:
		return DumpOrganization
	case r.Repository != nil:
		return DumpRepository
	case r.Team != nil:
		return DumpTeam
	case r.Member != nil:
		return DumpMember
	case r.ChartVersion != nil:
		return DumpChartVersion
	case r.Quota != nil:
		return DumpQuota
	case r.Retention != nil:
		return DumpRetention
	case r.Policy != nil:
		return DumpPolicy
	case r.Replication != nil:
		return DumpReplication
	case r.Webhook != nil:
		return DumpWebhook
	case r.OCIBlobLink != nil:
		return DumpOCIBlobLink
	case r.OCIManifest != nil:
		return DumpOCIManifest
	case r.OCITag != nil:
		return DumpOCITag
	case r.AuditEntry != nil:
		return DumpAuditEntry
	case r.Grant != nil:
		return DumpGrant
	case r.Robot != nil:
		return DumpRobot
	case r.Publisher != nil:
		return DumpPublisher
	case r.SCIMToken != nil:
		return DumpSCIMToken
	case r.SCIMGroup != nil:
		return DumpSCIMGroup
	case r.TrustEntry != nil:
		return DumpTrustEntry
	}
	return ""
}

// Exporter is a store that can dump every record it keeps from one read
// transaction, so the dump is a consistent snapshot even while writes go
// on. Records come kind by kind in DumpKinds order, so that each comes
// after what it refers to (except OCI manifests, which may come before
// the manifests of the same name they list), and audit entries oldest
// first. snapshot, if set, is called once the transaction has begun
// (before the first record), when the snapshot's content is fixed.
type Exporter interface {
	Export(ctx context.Context, snapshot func(), fn func(DumpRecord) error) error
}

// DumpCoverage says, for every method of the store interfaces (Store with
// the interfaces it embeds, OAuthStore, OCIStore), where what it writes
// goes in a dump: the DumpRecord field that carries it, "read" for a
// method that writes nothing, or "-" followed by why it is not dumped.
// A test fails when a method is missing here, so a new kind of stored
// data cannot be added without deciding whether backups, restores and
// `admin migrate` carry it.
var DumpCoverage = map[string]string{
	// Users and keys.
	"CreateUser":     "User",
	"User":           "read",
	"UserByEmail":    "read",
	"UserByIdentity": "read",
	"UserCount":      "read",
	"Users":          "read",
	"UpdateUser":     "User",
	"DeleteUser":     "User",
	"TouchUser":      "User",
	"CreateAPIKey":   "APIKey",
	"APIKeyByHash":   "read",
	"APIKeys":        "read",
	"DeleteAPIKey":   "APIKey",
	"TouchAPIKeys":   "APIKey",
	"OrgRoles":       "read",
	"Organization":   "read",
	"Organizations":  "read",

	"CreateOrganization": "Organization",

	// Repositories and charts.
	"CreateRepository":    "Repository",
	"Repository":          "read",
	"Repositories":        "read",
	"UpdateRepository":    "Repository",
	"DeleteRepository":    "Repository",
	"PutChartVersion":     "ChartVersion",
	"ChartVersion":        "read",
	"ChartVersions":       "read",
	"ChartTags":           "read",
	"ChartNames":          "read",
	"ChartVersionPage":    "read",
	"DeleteChartVersion":  "ChartVersion",
	"IndexEntries":        "read",
	"IndexEntry":          "read",
	"IndexGeneration":     "read",
	"SetIndexEntriesJSON": "ChartVersion",
	"BlobReferenced":      "read",
	"AddDownloads":        "ChartVersion",
	// A mirror's settings and sync state are part of its repository.
	"UpdateMirror":   "Repository",
	"SetMirrorState": "Repository",

	// Teams.
	"CreateTeam":       "Team",
	"Team":             "read",
	"Teams":            "read",
	"SetTeamIDPGroups": "Team",
	"AddMember":        "Member",
	"Members":          "read",
	"Member":           "read",
	"UpdateMemberRole": "Member",
	"RemoveMember":     "Member",

	// SCIM.
	"CreateSCIMToken": "SCIMToken",
	"SCIMTokens":      "read",
	"SCIMTokenByHash": "read",
	"TouchSCIMToken":  "SCIMToken",
	"DeleteSCIMToken": "SCIMToken",
	"PutSCIMGroup":    "SCIMGroup",
	"SCIMGroup":       "read",
	"SCIMGroups":      "read",
	"DeleteSCIMGroup": "SCIMGroup",

	// Audit log and webhooks.
	"AppendAudit":     "AuditEntry",
	"AuditLog":        "read",
	"PruneAudit":      "AuditEntry",
	"CreateWebhook":   "Webhook",
	"Webhook":         "read",
	"Webhooks":        "read",
	"UpdateWebhook":   "Webhook",
	"DeleteWebhook":   "Webhook",
	"ClaimDeliveries": "- webhook deliveries are in-flight work, not restored",
	"RecordAttempts":  "- webhook deliveries are in-flight work, not restored",
	"Deliveries":      "read",
	"Redeliver":       "- webhook deliveries are in-flight work, not restored",
	"EnqueueEvent":    "- webhook deliveries are in-flight work, not restored",

	// Quotas and retention.
	"Quota":              "read",
	"QuotaLimits":        "read",
	"SetQuota":           "Quota",
	"SetRetentionPolicy": "Retention",
	"MarkRetentionRun":   "- when a schedule last ran: a restored server starts its schedules afresh",
	"RetentionPolicies":  "read",

	// Admission policies.
	"Policy":    "read",
	"SetPolicy": "Policy",
	"Policies":  "read",
	// Version verdicts travel in their chart version.
	"SetVersionPolicy": "ChartVersion",

	// Replications (issue #31). Their tasks are in-flight work.
	"CreateReplication":        "Replication",
	"Replication":              "read",
	"Replications":             "read",
	"DeleteReplication":        "Replication",
	"ReplicationStatus":        "read",
	"EnqueueReplicationTasks":  "- replication tasks are in-flight work: a restored server runs `replication run` to copy again",
	"ClaimReplicationTasks":    "- replication tasks are in-flight work: a restored server runs `replication run` to copy again",
	"RecordReplicationResults": "- replication tasks are in-flight work: a restored server runs `replication run` to copy again",
	"RenewReplicationTasks":    "- replication tasks are in-flight work: a restored server runs `replication run` to copy again",

	// Leases.
	"AcquireLease": "- leases last seconds and belong to running processes",
	"ReleaseLease": "- leases last seconds and belong to running processes",

	// Blob claims.
	"ClaimBlobs":             "- claims last while an upload commits and belong to running processes",
	"ReleaseBlobClaims":      "- claims last while an upload commits and belong to running processes",
	"DeleteUnreferencedBlob": "- deletes a blob; the blobs a backup holds are those its records refer to",

	"Close": "read",

	// Access (issue #29).
	"PutGrant":                  "Grant",
	"Grants":                    "read",
	"DeleteGrant":               "Grant",
	"GrantsFor":                 "read",
	"CreateRobot":               "Robot",
	"Robot":                     "read",
	"RobotByID":                 "read",
	"RobotBySecretHash":         "read",
	"Robots":                    "read",
	"UpdateRobot":               "Robot",
	"RotateRobot":               "Robot",
	"DeleteRobot":               "Robot",
	"TouchRobots":               "Robot",
	"AddPublisher":              "Publisher",
	"Publishers":                "read",
	"PublishersByIssuer":        "read",
	"DeletePublisher":           "Publisher",
	"CreateExchangedCredential": "- exchanged credentials last minutes: CI exchanges its token again",
	"ExchangedCredentialByHash": "read",
	"RememberTokenID":           "- token IDs are kept only until the tokens expire, minutes later",
	"DeleteOrganization":        "Organization",

	// Trust (issue #30). Verification records travel in their chart
	// version.
	"AddTrustEntry":    "TrustEntry",
	"TrustEntries":     "read",
	"DeleteTrustEntry": "TrustEntry",
	"SetVerification":  "ChartVersion",
	// A version's hold is a field of its record (HeldUntil).
	"ReleaseChartVersion":    "ChartVersion",
	"HeldChartVersions":      "read",
	"ExpireHeldChartVersion": "ChartVersion",

	// Images (issue #33) travel in their chart version. Renderings, saved
	// with them, are derived from the archives: the images job renders
	// every version without one again after a restore.
	"SaveImages":      "ChartVersion",
	"Rendered":        "read",
	"RenderedDigests": "read",
	"PruneRendered":   "- renderings are derived from the archives: the images job renders them again after a restore",

	// OAuth.
	"CreateOAuthClient":       "OAuthClient",
	"OAuthClient":             "read",
	"CreateAuthorizationCode": "- OAuth codes are short-lived credentials",
	"RedeemAuthorizationCode": "- OAuth tokens are credentials: people sign in again after a restore",
	"OAuthToken":              "read",
	"RotateRefreshToken":      "- OAuth tokens are credentials: people sign in again after a restore",
	"RevokeGrant":             "- OAuth grants go with their tokens",
	"RevokeOAuthToken":        "- OAuth tokens are credentials: people sign in again after a restore",
	"CreateWebSession":        "- dashboard sessions are credentials: people sign in again",
	"WebSession":              "read",
	"DeleteWebSession":        "- dashboard sessions are credentials: people sign in again",
	"DeleteUserWebSessions":   "- dashboard sessions are credentials: people sign in again",
	"UserGrants":              "read",
	"DeleteExpiredOAuth":      "- OAuth codes, tokens and sessions are not dumped",

	// Device authorization (RFC 8628).
	"CreateDeviceAuthorization":     "- device codes are short-lived credentials",
	"DeviceAuthorizationByUserCode": "read",
	"DecideDeviceAuthorization":     "- device codes are short-lived credentials",
	"PollDeviceAuthorization":       "- OAuth tokens are credentials: people sign in again after a restore",

	// OCI registry.
	"LinkBlob":          "OCIBlobLink",
	"LinkBlobs":         "OCIBlobLink",
	"BlobLink":          "read",
	"BlobNames":         "read",
	"UnlinkBlob":        "OCIBlobLink",
	"UnreferencedLinks": "read",
	"PutManifest":       "OCIManifest",
	"Manifest":          "read",
	"Tag":               "read",
	"TaggedManifest":    "read",
	"Tags":              "read",
	"DeleteManifest":    "OCIManifest",
	"DeleteTag":         "OCITag",
	"Referrers":         "read",
	"ChartManifest":     "read",
	"ChartAlternates":   "read",
	"Names":             "read",
	"CreateUpload":      "- OCI upload sessions in progress are not restored (clients push again)",
	"Upload":            "read",
	"AdvanceUpload":     "- OCI upload sessions in progress are not restored (clients push again)",
	"DeleteUpload":      "- OCI upload sessions in progress are not restored (clients push again)",
	"Uploads":           "read",
}
