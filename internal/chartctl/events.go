package chartctl

import (
	"context"
	"encoding/json"
	"time"
)

// EventType names what happened (CONTRACT §15).
type EventType string

// The event types of §15.
const (
	EventChartPushed           EventType = "chart.pushed"
	EventChartDeleted          EventType = "chart.deleted"
	EventRepositoryCreated     EventType = "repository.created"
	EventRepositoryUpdated     EventType = "repository.updated"
	EventRepositoryDeleted     EventType = "repository.deleted"
	EventTeamMemberAdded       EventType = "team.member_added"
	EventTeamMemberRemoved     EventType = "team.member_removed"
	EventTeamMemberRoleChanged EventType = "team.member_role_changed"
	EventAPIKeyCreated         EventType = "api_key.created"
	EventAPIKeyRevoked         EventType = "api_key.revoked"
	EventRobotCreated          EventType = "robot.created"
	EventRobotRotated          EventType = "robot.rotated"
	EventRobotDeleted          EventType = "robot.deleted"
	EventPublisherAdded        EventType = "publisher.added"
	EventPublisherRemoved      EventType = "publisher.removed"
	EventTrustAdded            EventType = "trust.added"
	EventTrustRemoved          EventType = "trust.removed"
	EventChartVerified         EventType = "chart.verified"
	// EventChartHeld: a version was stored but held, waiting for its
	// signature (CONTRACT §18 decision 3); chart.pushed follows at release.
	EventChartHeld EventType = "chart.held"
	// EventChartReleased: a held version's signature verified; it is now
	// listed and pullable.
	EventChartReleased EventType = "chart.released"
	// EventReplicationFailed: a replication gave up copying (or deleting)
	// a version at its target after retrying it (CONTRACT §18 decision
	// 21); the version shows as failed in the replication's status.
	EventReplicationFailed EventType = "replication.failed"
	EventPing              EventType = "ping"
)

// EventTypes lists the event types a webhook may ask for ("*" asks for
// all); ping is sent to one webhook on request only.
var EventTypes = []EventType{
	EventChartPushed, EventChartDeleted,
	EventRepositoryCreated, EventRepositoryUpdated, EventRepositoryDeleted,
	EventTeamMemberAdded, EventTeamMemberRemoved, EventTeamMemberRoleChanged,
	EventAPIKeyCreated, EventAPIKeyRevoked,
	EventRobotCreated, EventRobotRotated, EventRobotDeleted,
	EventPublisherAdded, EventPublisherRemoved,
	EventTrustAdded, EventTrustRemoved, EventChartVerified,
	EventChartHeld, EventChartReleased,
	EventReplicationFailed,
}

// Valid reports whether t is one of EventTypes.
func (t EventType) Valid() bool {
	for _, v := range EventTypes {
		if v == t {
			return true
		}
	}
	return false
}

// Actor is who did something, and through what: the user, the credential
// and the request. Transports put one in the request's context
// (WithActor); the application layer copies it into audit entries and
// events.
type Actor struct {
	// UserID and Email name the user; both are "" for an anonymous caller.
	UserID string `json:"user_id,omitempty"`
	Email  string `json:"email,omitempty"`
	// CredentialID is the API key, OAuth grant or session; CredentialKind
	// is one of the Credential* constants.
	CredentialID   string `json:"credential_id,omitempty"`
	CredentialKind string `json:"credential_kind,omitempty"`
	// Robot is ORG/NAME when the credential is a robot's secret or one
	// exchanged for it; Publisher the trusted publisher's ID for an
	// exchanged credential.
	Robot     string `json:"robot,omitempty"`
	Publisher string `json:"publisher,omitempty"`
	// ClientIP is the caller's address; RequestID the X-Request-Id.
	ClientIP  string `json:"client_ip,omitempty"`
	RequestID string `json:"request_id,omitempty"`
}

// Credential kinds of an Actor.
const (
	CredentialAPIKey  = "api_key"
	CredentialOAuth   = "oauth"
	CredentialSession = "session"
	// CredentialMirror is the server itself syncing a mirror repository
	// from its upstream: no user, no credential.
	CredentialMirror = "mirror"
	// CredentialRobot is a robot account's secret; CredentialExchanged a
	// short-lived credential exchanged for a trusted publisher's token.
	CredentialRobot     = "robot"
	CredentialExchanged = "exchanged"
	// CredentialSCIM is a SCIM client's bearer token (CONTRACT §18
	// decision 21): the identity provider provisioning users and groups.
	CredentialSCIM = "scim"
)

// SetPrincipal copies p's user and credential into a.
func (a *Actor) SetPrincipal(p *Principal) {
	if a == nil || p == nil || p.User == nil {
		return
	}
	a.UserID, a.Email, a.CredentialID = p.User.ID, p.User.Email, p.CredentialID
	switch {
	case p.Robot != nil && p.PublisherID != "":
		a.CredentialKind, a.Robot, a.Publisher = CredentialExchanged, p.Robot.FullName(), p.PublisherID
	case p.Robot != nil:
		a.CredentialKind, a.Robot = CredentialRobot, p.Robot.FullName()
	case p.OAuth:
		a.CredentialKind = CredentialOAuth
	case len(p.CredentialID) > 4 && p.CredentialID[:4] == "key_":
		a.CredentialKind = CredentialAPIKey
	default:
		a.CredentialKind = CredentialSession
	}
}

type actorKey struct{}

// WithActor returns ctx carrying a. Transports call it once per request,
// before authentication, and fill the user in (Actor.SetPrincipal) when
// the credential is known: the pointer is shared.
func WithActor(ctx context.Context, a *Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor ctx carries, or an empty one (background
// work such as a scheduled retention run).
func ActorFrom(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(*Actor); ok && a != nil {
		return *a
	}
	return Actor{}
}

// Event is something that happened to a resource, as webhooks receive it.
type Event struct {
	// ID is unique ("evt_…"); it is the CloudEvents id and webhook-id.
	ID   string
	Type EventType
	Time time.Time
	// Repository and Organization place the event: webhooks of that
	// repository or organization receive it. Both "" for events only
	// server-wide webhooks receive (api_key.*).
	Repository   string
	Organization string
	// Source is the resource's /v1 path ("/v1/repositories/x"); Subject
	// names it within the source's collection ("mychart/1.0.0").
	Source  string
	Subject string
	// Data is the resource as /v1 shows it, plus "actor".
	Data json.RawMessage
}

// Outcome is how an audited act ended.
type Outcome string

// The outcomes of §15.
const (
	OutcomeSuccess Outcome = "success"
	OutcomeDenied  Outcome = "denied"
	OutcomeFailed  Outcome = "failed"
)

// AuditEntry records one act: a change, or a security-relevant attempt.
// Entries are append-only.
type AuditEntry struct {
	// ID is assigned by the store; IDs of later entries sort after earlier
	// ones.
	ID    string
	Time  time.Time
	Actor Actor
	// Action is "<resource>.<verb>" (chart.push, session.signin, …).
	Action string
	// Target names the resource acted on ("repo/chart/1.0.0", a team, an
	// email, a key ID).
	Target  string
	Outcome Outcome
	// Organization is the organization the target belongs to, "" if none;
	// its owners may read the entry.
	Organization string
}

// Change is what a mutation records beside itself: audit entries and
// events. The application layer attaches it to the context of a Store
// call (WithChange); the store writes it in the same transaction as the
// mutation, so a change is never committed without its record nor a
// record without its change. For each event the store also queues a
// delivery to every active webhook that wants it (Webhook.Wants), in the
// same transaction.
//
// A mutating call that changes nothing (PutChartVersion of an identical
// version, created=false) writes the audit entries but not the events.
// A call that fails writes neither.
type Change struct {
	Audit  []*AuditEntry
	Events []*Event
}

type changeKey struct{}

// WithChange returns ctx carrying c for the next mutating Store call.
func WithChange(ctx context.Context, c *Change) context.Context {
	return context.WithValue(ctx, changeKey{}, c)
}

// ChangeFrom returns the change ctx carries, nil if none. Store
// implementations call it in every mutating method.
func ChangeFrom(ctx context.Context) *Change {
	c, _ := ctx.Value(changeKey{}).(*Change)
	return c
}

// AuditFilter narrows GET /v1/audit. Zero fields match everything.
type AuditFilter struct {
	// Actor matches the actor's user ID or email (case-insensitive).
	Actor string
	// Action matches exactly, or every action of a resource when it ends
	// in "." or names only the resource ("chart" matches chart.push).
	Action string
	// Target matches exactly.
	Target string
	// Organization keeps entries of that organization only.
	Organization string
	Since, Until time.Time
	// Cursor continues a listing: the NextCursor of the previous page.
	Cursor string
	// Limit is the page size (1–100).
	Limit int
}

// Webhook sends events to a URL.
type Webhook struct {
	ID string
	// Repository or Organization, at most one, scope the webhook; neither
	// is a server-wide webhook (admins), which receives every event.
	Repository   string
	Organization string
	// RepositoryID binds a repository webhook to the repository it was
	// created for (CONTRACT §18 decision 2): the store refuses to create
	// it when the repository named Repository has another ID by then (it
	// was deleted and re-created meanwhile; empty: whichever holds the
	// name now), and DeleteRepository deletes it with its deliveries, so
	// a later repository of the same name never inherits it.
	RepositoryID string
	URL          string
	// Events lists the types wanted; "*" means all.
	Events []string
	Active bool
	// Secret is the signing secret ("whsec_…") sealed by the application
	// layer; stores keep it as opaque bytes.
	Secret []byte
	// CreatedBy is the creating user's ID.
	CreatedBy string
	CreatedAt time.Time
	// DisabledReason says why the dispatcher disabled the webhook.
	DisabledReason string
}

// Wants reports whether w should receive e: it is active, asks for e's
// type, and e belongs to its scope (a repository webhook: events of that
// repository; an organization webhook: events of its repositories and
// teams; a server-wide webhook: everything).
func (w *Webhook) Wants(e *Event) bool {
	if !w.Active || e.Type == EventPing {
		return false
	}
	switch {
	case w.Repository != "":
		if e.Repository != w.Repository {
			return false
		}
	case w.Organization != "":
		if e.Organization != w.Organization {
			return false
		}
	}
	for _, t := range w.Events {
		if t == "*" || t == string(e.Type) {
			return true
		}
	}
	return false
}

// WebhookUpdate lists what UpdateWebhook changes; nil fields stay.
type WebhookUpdate struct {
	URL    *string
	Events []string
	Active *bool
	Secret []byte
	// DisabledReason replaces the reason; enabling a webhook clears it.
	DisabledReason *string
}

// DeliveryState is where a delivery stands.
type DeliveryState string

// Delivery states.
const (
	DeliveryPending   DeliveryState = "pending"
	DeliveryDelivered DeliveryState = "delivered"
	DeliveryFailed    DeliveryState = "failed"
)

// Attempt is one try at a delivery.
type Attempt struct {
	At         time.Time
	StatusCode int
	Duration   time.Duration
	// ResponseExcerpt is the start of the response body, or the error.
	ResponseExcerpt string
}

// AttemptResult is one attempt of a delivery and where it leaves the
// delivery, for RecordAttempts.
type AttemptResult struct {
	DeliveryID string
	Attempt    Attempt
	// State is the delivery's new state; Next (pending only) when to try
	// again.
	State DeliveryState
	Next  *time.Time
	// Disable, if not empty, deactivates the delivery's webhook with this
	// reason, in the same transaction.
	Disable string
	// Unsent records no attempt: the claim ends and the delivery stays
	// pending, due at Next (a delivery claimed behind one that failed,
	// which it must not overtake).
	Unsent bool
}

// Delivery is one event on its way to one webhook. Deliveries of a webhook
// go out in Seq order: a pending one holds back the later ones.
type Delivery struct {
	ID        string
	WebhookID string
	Seq       uint64
	Event     *Event
	State     DeliveryState
	// Attempts made so far, oldest first.
	Attempts []Attempt
	// NextAttemptAt is when the dispatcher may try again (pending only).
	NextAttemptAt *time.Time
	CreatedAt     time.Time
}

// WebhookStore keeps webhooks, their delivery queues and the audit log.
// Events reach it through Change; these methods serve the dispatcher and
// the /v1 endpoints. Engines scaled out across replicas must make
// ClaimDeliveries exclusive (FOR UPDATE SKIP LOCKED or equivalent).
type WebhookStore interface {
	// AppendAudit stores entries on their own: acts that changed nothing
	// (a refused or failed attempt, a sign-in). IDs and empty times are
	// filled.
	AppendAudit(ctx context.Context, entries ...*AuditEntry) error
	// AuditLog returns entries matching f, newest first, and the cursor
	// of the next page ("" at the end).
	AuditLog(ctx context.Context, f AuditFilter) ([]*AuditEntry, string, error)
	// PruneAudit deletes entries older than before and returns how many.
	PruneAudit(ctx context.Context, before time.Time) (int, error)

	// CreateWebhook stores w, filling ID and CreatedAt when empty, and
	// for a repository webhook RepositoryID when empty. Returns ENOTFOUND
	// if w.Repository is set and no repository of that name (with
	// RepositoryID, when set) exists.
	CreateWebhook(ctx context.Context, w *Webhook) error
	// Webhook returns one webhook. Returns ENOTFOUND.
	Webhook(ctx context.Context, id string) (*Webhook, error)
	// Webhooks returns the webhooks of a repository (repo set), an
	// organization (org set) or the server-wide ones (both ""), oldest
	// first.
	Webhooks(ctx context.Context, repo, org string) ([]*Webhook, error)
	// UpdateWebhook applies upd and returns the result. Returns ENOTFOUND.
	UpdateWebhook(ctx context.Context, id string, upd WebhookUpdate) (*Webhook, error)
	// DeleteWebhook deletes a webhook and its deliveries. Returns ENOTFOUND.
	DeleteWebhook(ctx context.Context, id string) error

	// ClaimDeliveries returns, for each active webhook, the deliveries at
	// the head of its queue that are due at now — from its oldest pending
	// delivery on, in order, stopping at the first that is not due, at
	// most perWebhook — and at most limit in all, ordered by webhook, then
	// queue order; with their Events. It postpones them by lease so no
	// other caller claims them meanwhile: a webhook whose head is claimed
	// gives none. (A batch per webhook lets a dispatcher send a burst of
	// deliveries with one claim and one RecordAttempts.)
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, perWebhook, limit int) ([]*Delivery, error)
	// RecordAttempts records a round of attempts in one transaction (a
	// dispatcher's round: one commit, not one per delivery): each
	// result's attempt is appended to its delivery, which moves to the
	// result's state. A delivery that no longer exists (its webhook was
	// deleted meanwhile) is skipped.
	RecordAttempts(ctx context.Context, results []AttemptResult) error
	// Deliveries returns a webhook's deliveries, newest first, at most
	// limit. Returns ENOTFOUND if the webhook does not exist.
	Deliveries(ctx context.Context, webhookID string, limit int) ([]*Delivery, error)
	// Redeliver queues the event of delivery deliveryID again to its
	// webhook, as a new delivery due at once, and returns it. Returns
	// ENOTFOUND.
	Redeliver(ctx context.Context, webhookID, deliveryID string) (*Delivery, error)
	// EnqueueEvent queues e to the one webhook webhookID whatever it
	// wants (a ping), storing e, and returns the delivery.
	EnqueueEvent(ctx context.Context, webhookID string, e *Event) (*Delivery, error)
}

// Quota limits what a repository or an organization may hold; nil is
// unlimited.
type Quota struct {
	MaxBytes    *int64
	MaxVersions *int64
	// RepositoryID, when set on a repository's quota given to SetQuota,
	// is the ID of the repository the caller was authorized against: the
	// store refuses the quota (ENOTFOUND) if the repository of that name
	// has another ID by then (CONTRACT §18 decision 2). Stores do not
	// keep it.
	RepositoryID string
}

// Usage is what a repository or an organization holds: the bytes of its
// chart archives and provenance files (before any deduplication) and its
// number of chart versions.
type Usage struct {
	Bytes    int64
	Versions int64
}

// Quota scopes.
const (
	QuotaRepository   = "repository"
	QuotaOrganization = "organization"
)

// QuotaStore keeps quotas and usage. Engines enforce quotas inside the
// transaction of PutChartVersion (so concurrent uploads cannot pass one):
// a version that would take the repository or its organization past a
// limit is EQUOTA, whose message names the quota, its limit and the
// current use.
type QuotaStore interface {
	// Quota returns the quota and usage of the repository or organization
	// (scope QuotaRepository or QuotaOrganization) named name. Returns
	// ENOTFOUND.
	Quota(ctx context.Context, scope, name string) (Quota, Usage, error)
	// QuotaLimits returns the quota alone, without counting the usage
	// (which for OCI content grows with the repository). Returns
	// ENOTFOUND.
	QuotaLimits(ctx context.Context, scope, name string) (Quota, error)
	// SetQuota replaces the quota. Returns ENOTFOUND.
	SetQuota(ctx context.Context, scope, name string, q Quota) error
}

// DownloadCount is a batch of downloads of one chart version.
type DownloadCount struct {
	Repository, Name, Version string
	// Count is how many downloads the batch adds; Last is the latest
	// (it moves the version's LastDownloadedAt forward, never back). A
	// Count of 0 only records a use at Last: a proxy's fill, from which
	// its retention counts.
	Count int64
	Last  time.Time
}

// DownloadStore keeps download counters.
type DownloadStore interface {
	// AddDownloads adds each count to its chart version's counter in one
	// write (counts of versions that no longer exist are dropped). Adding
	// is commutative, so replicas each flush their own counts.
	AddDownloads(ctx context.Context, counts []DownloadCount) error
}

// RetentionPolicy says which chart versions of a repository a retention
// run deletes (§15). Nil fields are unset.
type RetentionPolicy struct {
	// KeepLatest keeps the newest N versions (by SemVer) of each chart.
	KeepLatest *int
	// KeepPushedWithin keeps versions pushed within the duration.
	KeepPushedWithin *time.Duration
	// KeepDownloadedWithin keeps versions downloaded within the duration.
	KeepDownloadedWithin *time.Duration
	// KeepMatching is a SemVer constraint; matching versions are never
	// deleted.
	KeepMatching string
	// DeletePrereleasesAfter deletes pre-releases older than the duration.
	DeletePrereleasesAfter *time.Duration
	// Schedule is a cron expression for scheduled runs ("" for none).
	Schedule string
	// RepositoryID, when set on a policy given to SetRetentionPolicy, is
	// the ID of the repository the caller was authorized against: the
	// store refuses the policy (ENOTFOUND) if the repository of that name
	// has another ID by then (CONTRACT §18 decision 2). Stores do not
	// keep it.
	RepositoryID string
	// LastRun is when a scheduled run last applied the policy (zero:
	// never). The store keeps it across SetRetentionPolicy, which ignores
	// this field; only MarkRetentionRun sets it. Replicas read it to run
	// each due schedule once.
	LastRun time.Time
}

// RetentionStore keeps retention policies.
type RetentionStore interface {
	// SetRetentionPolicy replaces the repository's policy; nil removes
	// it. Returns ENOTFOUND.
	SetRetentionPolicy(ctx context.Context, repo string, p *RetentionPolicy) error
	// RetentionPolicies returns every repository's policy, by repository
	// name.
	RetentionPolicies(ctx context.Context) (map[string]*RetentionPolicy, error)
	// MarkRetentionRun records that a scheduled run applied the
	// repository's policy at at (its LastRun), changing nothing else of
	// the policy. Returns ENOTFOUND if the repository has no policy.
	MarkRetentionRun(ctx context.Context, repo string, at time.Time) error
}
