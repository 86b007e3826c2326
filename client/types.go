package client

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// This file holds the /v1 wire types. The server encodes exactly these, so
// the SDK and the service cannot drift apart.

// Repository is a chart repository.
type Repository struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	Description  string  `json:"description"`
	Organization *string `json:"organization"`
	Visibility   string  `json:"visibility"`
	// IndexFormat is how the repository's index.yaml is written:
	// IndexFormatJSON or IndexFormatYAML.
	IndexFormat string    `json:"index_format"`
	CreatedAt   time.Time `json:"created_at"`
	// Mirror is set when the repository is a read-only mirror of an
	// upstream Helm repository.
	Mirror *RepositoryMirror `json:"mirror,omitempty"`
	// Proxy is set when the repository is a read-only pull-through cache
	// of an upstream Helm repository or OCI registry path.
	Proxy *RepositoryProxy `json:"proxy,omitempty"`
}

// The values of RepositoryProxy.UpstreamStatus.
const (
	ProxyUpstreamOK          = "ok"
	ProxyUpstreamUnreachable = "unreachable"
	ProxyUpstreamUnknown     = "unknown"
)

// RepositoryProxy is a proxy repository's upstream, settings and cache
// counters. Its password is never shown.
type RepositoryProxy struct {
	// URL is the upstream: https://… Helm repository or oci://HOST/PATH.
	URL string `json:"url"`
	// Username is the upstream's user, "" for none.
	Username string `json:"username,omitempty"`
	// TTL is how long a fetched index or tag is served before it is
	// revalidated ("10m").
	TTL string `json:"ttl"`
	// Retention is how long a cached version nobody pulls is kept before
	// it is dropped (and fetched again on demand): "30d".
	Retention string `json:"retention"`
	// Include and Exclude are globs on chart names.
	Include []string `json:"include"`
	Exclude []string `json:"exclude"`
	// Hits and Misses count requests served from the cache and those
	// that needed the upstream, on the replica that answered, since it
	// started.
	Hits   int64 `json:"hits"`
	Misses int64 `json:"misses"`
	// UpstreamStatus is ProxyUpstreamOK, ProxyUpstreamUnreachable or
	// ProxyUpstreamUnknown (not asked since the replica started).
	UpstreamStatus string `json:"upstream_status"`
	// UpstreamError says why the upstream was last unreachable.
	UpstreamError string `json:"upstream_error,omitempty"`
	// CheckedAt is when the upstream last answered or failed.
	CheckedAt *time.Time `json:"checked_at,omitempty"`
}

// ProxyRequest sets a proxy's upstream: all of it on POST
// /v1/repositories (URL required; TTL defaults to "10m"), the fields
// that are set on PATCH. An empty Username or Password removes it.
type ProxyRequest struct {
	URL      *string `json:"url,omitempty"`
	Username *string `json:"username,omitempty"`
	Password *string `json:"password,omitempty"`
	TTL      *string `json:"ttl,omitempty"`
	// Retention: how long a cached version nobody pulls is kept ("30d",
	// "72h"; from 1h to 3650d; default 30d).
	Retention *string   `json:"retention,omitempty"`
	Include   *[]string `json:"include,omitempty"`
	Exclude   *[]string `json:"exclude,omitempty"`
}

// PurgeCacheResult is the answer of DELETE /v1/repositories/:repo/cache.
type PurgeCacheResult struct {
	// Purged lists the cached versions deleted.
	Purged []ChartUpload `json:"purged"`
}

// The values of Repository.IndexFormat.
const (
	// IndexFormatJSON serves index.yaml as JSON (valid YAML; Helm ≥ 3.13
	// and Flux load it several times faster).
	IndexFormatJSON = "json"
	// IndexFormatYAML serves index.yaml as Helm's own writer does.
	IndexFormatYAML = "yaml"
)

// The statuses of RepositoryMirror.Status.
const (
	MirrorStatusOK      = "ok"
	MirrorStatusSyncing = "syncing"
	MirrorStatusError   = "error"
)

// RepositoryMirror is a mirror repository's upstream and sync state. Its
// password is never shown.
type RepositoryMirror struct {
	// URL is the upstream Helm repository.
	URL string `json:"url"`
	// Interval is the time between scheduled syncs ("1h", "7d").
	Interval string `json:"interval"`
	// Username is the upstream's basic auth user, "" for none.
	Username string `json:"username,omitempty"`
	// LastSyncAt is when the last complete sync finished, nil if none has.
	LastSyncAt *time.Time `json:"last_sync_at"`
	// Status is MirrorStatusOK, MirrorStatusSyncing or MirrorStatusError.
	Status string `json:"status"`
	// Error says why the last sync failed (Status "error").
	Error string `json:"error,omitempty"`
}

// CreateRepositoryRequest is the body of POST /v1/repositories.
type CreateRepositoryRequest struct {
	Name         string `json:"name"`
	Description  string `json:"description,omitempty"`
	Organization string `json:"organization,omitempty"`
	Visibility   string `json:"visibility,omitempty"`
	// IndexFormat is IndexFormatJSON or IndexFormatYAML; empty takes the
	// server's default (--index-format, json unless set).
	IndexFormat string `json:"index_format,omitempty"`
	// Mirror makes the repository a read-only mirror of an upstream.
	Mirror *MirrorRequest `json:"mirror,omitempty"`
	// Proxy makes the repository a read-only pull-through cache of an
	// upstream (exclusive with Mirror).
	Proxy *ProxyRequest `json:"proxy,omitempty"`
}

// MirrorRequest sets a mirror's upstream: all of it on POST
// /v1/repositories (URL required; Interval defaults to "1h"), the fields
// that are set on PATCH. An empty Username or Password removes it.
type MirrorRequest struct {
	URL *string `json:"url,omitempty"`
	// Interval is a duration such as "30m", "12h" or "7d", at least "5m".
	Interval *string `json:"interval,omitempty"`
	Username *string `json:"username,omitempty"`
	Password *string `json:"password,omitempty"`
}

// UpdateRepositoryRequest is the body of PATCH /v1/repositories/:repo;
// nil fields are left as they are.
type UpdateRepositoryRequest struct {
	Description *string `json:"description,omitempty"`
	Visibility  *string `json:"visibility,omitempty"`
	// IndexFormat is IndexFormatJSON or IndexFormatYAML.
	IndexFormat *string `json:"index_format,omitempty"`
	// Mirror changes a mirror repository's upstream settings.
	Mirror *MirrorRequest `json:"mirror,omitempty"`
	// Proxy changes a proxy repository's settings.
	Proxy *ProxyRequest `json:"proxy,omitempty"`
}

// Chart is one chart version as listed.
type Chart struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Description string   `json:"description"`
	AppVersion  string   `json:"app_version"`
	Digest      string   `json:"digest"`
	Size        int64    `json:"size,omitempty"`
	Keywords    []string `json:"keywords,omitempty"`
	// Home, Sources and Maintainers come from Chart.yaml; only the response
	// for one version (GET …/charts/:name/:version) carries them.
	Home        string       `json:"home,omitempty"`
	Sources     []string     `json:"sources,omitempty"`
	Maintainers []Maintainer `json:"maintainers,omitempty"`
	CreatedAt   time.Time    `json:"created_at"`
	// Downloads counts the archive's downloads by every protocol (updated
	// every few seconds).
	Downloads int64 `json:"downloads"`
	// Images are the images the version deploys (normalized as Docker
	// reads them: docker.io/library/nginx:1.25); ImagesSource says where
	// they come from: "annotation" (artifacthub.io/images), "rendered",
	// "unrenderable" (then ImagesError says why), or "pending" until
	// they are extracted.
	Images       []string `json:"images"`
	ImagesSource string   `json:"images_source"`
	ImagesError  string   `json:"images_error,omitempty"`
	// Verification says which signatures of the version exist and which
	// verified against the trust material of its repository or
	// organization.
	Verification *Verification `json:"verification,omitempty"`
	// Held says the version is held: stored without the signature its
	// repository's policy requires, it is in no index and pullable by
	// nobody until a signature verifies, or deleted at HeldUntil. Only
	// those who may push to the repository see held versions.
	Held      bool       `json:"held"`
	HeldUntil *time.Time `json:"held_until,omitempty"`
	// Policy is the admission policy's verdict on the version: the
	// findings kept at push (lint warnings) and, after a policy change,
	// the rules it no longer meets.
	Policy *VersionPolicy `json:"policy,omitempty"`
}

// VersionPolicy is a chart version's admission verdict (CONTRACT §18).
type VersionPolicy struct {
	// Status is "ok", "held" (stored, waiting for the signature its
	// policy requires) or "noncompliant" (stored before a policy change
	// it no longer meets; still listed and pullable).
	Status string `json:"status"`
	// Findings are the rules the version breaks (severity "error") and
	// the warnings kept on it (severity "warning").
	Findings []Finding `json:"findings"`
	// CheckedAt is when the findings were computed, nil when no policy
	// ever checked the version.
	CheckedAt *time.Time `json:"checked_at,omitempty"`
}

// Verification is a chart version's verification record (CONTRACT §18).
type Verification struct {
	// Status is "verified", "unverified" (signed, nothing verified) or
	// "unsigned".
	Status     string      `json:"status"`
	Signatures []Signature `json:"signatures"`
}

// SignedBy returns the identity of the first verified signature, "" if
// none verified.
func (v *Verification) SignedBy() string {
	if v == nil {
		return ""
	}
	for _, s := range v.Signatures {
		if s.VerifiedAt != nil {
			return s.Identity
		}
	}
	return ""
}

// Summary says in one line what the record means for a person: "Signed
// by IDENTITY, verified", "Not signed", or "Signature not verified
// (REASON)".
func (v *Verification) Summary() string {
	if v == nil || v.Status == "unsigned" || len(v.Signatures) == 0 {
		return "Not signed"
	}
	for _, s := range v.Signatures {
		if s.VerifiedAt != nil {
			who := s.Identity
			if who == "" {
				who = "trust entry " + s.Trust
			}
			return "Signed by " + who + ", verified"
		}
	}
	reason := v.Signatures[0].Reason
	if reason == "" {
		reason = "no trust entry of the repository or its organization verifies it"
	}
	if len(v.Signatures) > 1 {
		return "Signatures not verified (" + reason + ")"
	}
	return "Signature not verified (" + reason + ")"
}

// Summary says in one line what a policy verdict means for a person:
// "ok", "ok, N warnings", "held: waiting for its signature", or
// "noncompliant: breaks RULE, RULE".
func (p *VersionPolicy) Summary() string {
	if p == nil {
		return "ok"
	}
	var broken []string
	warnings := 0
	for _, f := range p.Findings {
		if f.Severity == "error" {
			if !slices.Contains(broken, f.Rule) {
				broken = append(broken, f.Rule)
			}
		} else {
			warnings++
		}
	}
	switch {
	case p.Status == "held":
		return "held: waiting for the signature its policy requires"
	case p.Status == "noncompliant" || len(broken) > 0:
		return "noncompliant: breaks " + strings.Join(broken, ", ")
	case warnings == 1:
		return "ok, 1 warning"
	case warnings > 1:
		return fmt.Sprintf("ok, %d warnings", warnings)
	}
	return "ok"
}

// Signature is one signature of a chart version.
type Signature struct {
	// Kind is "pgp" (a Helm provenance file), "cosign" or "notation".
	Kind string `json:"kind"`
	// Identity names the signer: a PGP user ID, a key's trust entry, a
	// keyless certificate's subject.
	Identity string `json:"identity"`
	// Trust names the trust entry that verified it, "" if none did.
	Trust string `json:"trust"`
	// VerifiedAt is when it verified, nil if it did not.
	VerifiedAt *time.Time `json:"verified_at"`
	// Reason says why it did not verify ("" when it did).
	Reason string `json:"reason,omitempty"`
}

// TrustEntry is trust material of a repository or an organization.
type TrustEntry struct {
	Name string `json:"name"`
	// Kind is "pgp", "cosign-key", "cosign-keyless" or "notation".
	Kind string `json:"kind"`
	// Key is the public material (armored keyring or PEM), "" for
	// cosign-keyless.
	Key       string    `json:"key,omitempty"`
	Issuer    string    `json:"issuer,omitempty"`
	Subject   string    `json:"subject,omitempty"`
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// TrustRequest adds a trust entry (POST …/trust). Key takes armored or
// PEM text; a binary keyring goes base64 in KeyBase64.
type TrustRequest struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Key       string `json:"key,omitempty"`
	KeyBase64 string `json:"key_base64,omitempty"`
	Issuer    string `json:"issuer,omitempty"`
	Subject   string `json:"subject,omitempty"`
}

// Maintainer is a chart maintainer from Chart.yaml.
type Maintainer struct {
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
	URL   string `json:"url,omitempty"`
}

// ChartUpload is the response to a chart upload.
type ChartUpload struct {
	Name      string    `json:"name"`
	Version   string    `json:"version"`
	Digest    string    `json:"digest"`
	Size      int64     `json:"size"`
	CreatedAt time.Time `json:"created_at"`
	// Held and HeldUntil say the version was stored held, waiting for
	// the signature its repository's policy requires (see Chart.Held).
	Held      bool       `json:"held,omitempty"`
	HeldUntil *time.Time `json:"held_until,omitempty"`
}

// SearchResult is one chart found by search: the latest matching version of
// a chart in one repository.
type SearchResult struct {
	Repository  string    `json:"repository"`
	Name        string    `json:"name"`
	Version     string    `json:"version"`
	AppVersion  string    `json:"app_version"`
	Description string    `json:"description"`
	Keywords    []string  `json:"keywords,omitempty"`
	Digest      string    `json:"digest"`
	CreatedAt   time.Time `json:"created_at"`
	// Images are the images the version deploys, as Chart.yaml's
	// artifacthub.io/images annotation lists them (normalized).
	Images []string `json:"images"`
	// Deprecated is Chart.yaml's deprecated; Category and License its
	// artifacthub.io/category and artifacthub.io/license annotations.
	Deprecated bool   `json:"deprecated"`
	Category   string `json:"category,omitempty"`
	License    string `json:"license,omitempty"`
	// Signed is set when a signature of the version verified against its
	// repository's or organization's trust.
	Signed bool `json:"signed"`
}

// SearchFacets counts every hit of a search (not one page) by value:
// repository, organization, category, license and deprecated ("true",
// "false"). Hits without an organization, category or license are not
// counted under those.
type SearchFacets struct {
	Repository   map[string]int `json:"repository"`
	Organization map[string]int `json:"organization"`
	Category     map[string]int `json:"category"`
	License      map[string]int `json:"license"`
	Deprecated   map[string]int `json:"deprecated"`
	// Signed counts verified versions ("true") and the others ("false").
	Signed map[string]int `json:"signed"`
}

// Organization is an organization.
type Organization struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
}

// CreateOrganizationRequest is the body of POST /v1/organizations.
type CreateOrganizationRequest struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Team is a team inside an organization.
type Team struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	MemberCount  int    `json:"member_count"`
	Organization string `json:"organization"`
	// IDPGroups are the identity provider groups (names or ids) the team
	// is bound to; empty when its members are managed by hand.
	IDPGroups []string `json:"idp_groups"`
}

// CreateTeamRequest is the body of POST /v1/teams.
type CreateTeamRequest struct {
	Name         string `json:"name"`
	Organization string `json:"organization"`
	Description  string `json:"description,omitempty"`
	// IDPGroups binds the new team to identity provider groups.
	IDPGroups []string `json:"idp_groups,omitempty"`
}

// UpdateTeamRequest is the body of PATCH /v1/teams/:team.
type UpdateTeamRequest struct {
	// IDPGroups replaces the groups the team is bound to; an empty list
	// unbinds it.
	IDPGroups *[]string `json:"idp_groups,omitempty"`
}

// Member is a team member.
type Member struct {
	ID      string    `json:"id"`
	Email   string    `json:"email"`
	Role    string    `json:"role"`
	AddedAt time.Time `json:"added_at"`
}

// AddMemberRequest is the body of POST /v1/teams/:team/members.
type AddMemberRequest struct {
	Email string `json:"email"`
	Role  string `json:"role,omitempty"`
}

// UpdateMemberRequest is the body of PATCH /v1/teams/:team/members/:member.
type UpdateMemberRequest struct {
	Role string `json:"role"`
}

// User is the account a credential belongs to (GET /v1/user).
type User struct {
	ID        string    `json:"id"`
	Email     string    `json:"email"`
	Admin     bool      `json:"admin"`
	Scopes    []string  `json:"scopes"`
	CreatedAt time.Time `json:"created_at"`
	// Robot is "ORG/NAME" when the credential is a robot account's secret
	// or one exchanged for it; Permissions and Repositories are then the
	// robot's (CONTRACT §18 decision 21). Repositories is also set for a
	// repository-restricted API key.
	Robot        string   `json:"robot,omitempty"`
	Permissions  []string `json:"permissions,omitempty"`
	Repositories []string `json:"repositories,omitempty"`
	// Identity is how the user signs in; absent for a robot.
	Identity *Identity `json:"identity,omitempty"`
}

// Identity is how a user signs in: Provider "local" (a chartctl
// password, or none for a service account; Subject empty), "oidc" with
// the identity provider's subject (the ID token's sub), or "ldap" with the
// directory entry's entryUUID (its DN where the directory keeps none).
type Identity struct {
	Provider string `json:"provider"`
	Subject  string `json:"subject"`
}

// Account is a user as a server admin sees it (GET /v1/users).
type Account struct {
	ID       string `json:"id"`
	Email    string `json:"email"`
	Admin    bool   `json:"admin"`
	Disabled bool   `json:"disabled"`
	// CreatedAt is when the account was created; LastSeenAt when it last
	// signed in or used an API key (nil if never).
	CreatedAt  time.Time  `json:"created_at"`
	LastSeenAt *time.Time `json:"last_seen_at"`
	// Identity is how the user signs in.
	Identity Identity `json:"identity"`
}

// UpdateUserRequest is the body of PATCH /v1/users/:email (admin only);
// nil fields stay as they are. Disabling a user ends their dashboard
// sessions, OAuth grants and API keys at once.
type UpdateUserRequest struct {
	Disabled *bool   `json:"disabled,omitempty"`
	Admin    *bool   `json:"admin,omitempty"`
	Password *string `json:"password,omitempty"`
}

// CreateUserRequest is the body of POST /v1/users (admin only).
type CreateUserRequest struct {
	Email    string `json:"email"`
	Password string `json:"password,omitempty"`
	Admin    bool   `json:"admin,omitempty"`
}

// APIKey is an API key's metadata. Key holds the value only in the response
// that created it.
type APIKey struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Scopes     []string   `json:"scopes"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	// Repositories, when not empty, limits the key to the repositories
	// matching one of these patterns ("acme-*"), on top of its scopes.
	Repositories []string `json:"repositories,omitempty"`
	Key          string   `json:"key,omitempty"`
}

// CreateAPIKeyRequest is the body of POST /v1/user/api-keys.
type CreateAPIKeyRequest struct {
	Name      string     `json:"name"`
	Scopes    []string   `json:"scopes"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// Repositories limits the key to repositories matching these patterns.
	Repositories []string `json:"repositories,omitempty"`
}

// RateLimitResource is one bucket's state.
type RateLimitResource struct {
	Limit     int   `json:"limit"`
	Remaining int   `json:"remaining"`
	Reset     int64 `json:"reset"`
	Used      int   `json:"used"`
}

// RateLimits is the body of GET /v1/rate-limit.
type RateLimits struct {
	Resources map[string]RateLimitResource `json:"resources"`
}

// OAuthClient is a registered OAuth client. Secret is set only in the
// response that registered a confidential client.
type OAuthClient struct {
	ClientID     string    `json:"client_id"`
	ClientSecret string    `json:"client_secret,omitempty"`
	Name         string    `json:"name"`
	RedirectURIs []string  `json:"redirect_uris"`
	Public       bool      `json:"public"`
	CreatedAt    time.Time `json:"created_at"`
}

// CreateOAuthClientRequest is the body of POST /v1/oauth-clients.
type CreateOAuthClientRequest struct {
	Name         string   `json:"name"`
	RedirectURIs []string `json:"redirect_uris"`
	Public       bool     `json:"public,omitempty"`
}

// Meta is the pagination metadata of list responses.
type Meta struct {
	Total int `json:"total"`
	Page  int `json:"page"`
	Limit int `json:"limit"`
	// NextCursor continues a cursor-paginated list (the audit log); ""
	// on its last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// ErrorBody is the body of every error response.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the `error` member of an error response.
type ErrorDetail struct {
	Code       string `json:"code"`
	Message    string `json:"message"`
	Parameter  string `json:"parameter,omitempty"`
	RetryAfter int    `json:"retry_after,omitempty"`
	// Violations lists every rule an admission policy refused a chart
	// (or a repository policy) for, on 422 policy_violation.
	Violations []Violation `json:"violations,omitempty"`
}

// Violation is one rule of an admission policy a chart broke.
type Violation struct {
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// Error codes of the contract.
const (
	CodeInvalidParameter     = "invalid_parameter"
	CodeUnauthorized         = "unauthorized"
	CodeForbidden            = "forbidden"
	CodeNotFound             = "not_found"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodeConflict             = "conflict"
	CodePayloadTooLarge      = "payload_too_large"
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodeRateLimitExceeded    = "rate_limit_exceeded"
	CodeInternalError        = "internal_error"
	CodeUnavailable          = "unavailable"
	CodeQuotaExceeded        = "quota_exceeded"
	// CodeRequestTimeout: an upload body arrived slower than the server's
	// minimum upload rate and was cut off.
	CodeRequestTimeout = "request_timeout"
	// CodePolicyViolation: a repository's admission policy refused a
	// chart; ErrorDetail.Violations names every rule (CONTRACT §18).
	CodePolicyViolation = "policy_violation"
	// CodeUpstreamUnavailable: a proxy repository's upstream failed and
	// nothing is cached; the message names the upstream's host.
	CodeUpstreamUnavailable = "upstream_unavailable"
)

var codeStatus = map[string]int{
	CodeInvalidParameter:     http.StatusBadRequest,
	CodeUnauthorized:         http.StatusUnauthorized,
	CodeForbidden:            http.StatusForbidden,
	CodeNotFound:             http.StatusNotFound,
	CodeMethodNotAllowed:     http.StatusMethodNotAllowed,
	CodeConflict:             http.StatusConflict,
	CodePayloadTooLarge:      http.StatusRequestEntityTooLarge,
	CodeUnsupportedMediaType: http.StatusUnsupportedMediaType,
	CodeRateLimitExceeded:    http.StatusTooManyRequests,
	CodeInternalError:        http.StatusInternalServerError,
	CodeUnavailable:          http.StatusServiceUnavailable,
	CodeQuotaExceeded:        http.StatusInsufficientStorage,
	CodeRequestTimeout:       http.StatusRequestTimeout,
	CodePolicyViolation:      http.StatusUnprocessableEntity,
	CodeUpstreamUnavailable:  http.StatusBadGateway,
}

// HTTPStatus returns the HTTP status for an error code (500 for unknown).
// It is the one table of the contract, used by the server to answer and by
// the SDK to read answers.
func HTTPStatus(code string) int {
	if s, ok := codeStatus[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// CodeForStatus returns the error code for an HTTP status, for responses
// that carry no error body (a proxy's 502, say).
func CodeForStatus(status int) string {
	for code, s := range codeStatus {
		// A 502 without a body is a gateway in front of the server, not a
		// proxy repository's upstream (whose 502 always has a body).
		if s == status && code != CodeUpstreamUnavailable {
			return code
		}
	}
	if status >= 500 {
		return CodeInternalError
	}
	return CodeInvalidParameter
}

// SCIMToken is a SCIM client's bearer token; Token (its value) is set only
// in the answer to its creation.
type SCIMToken struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Token      string     `json:"token,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

// CreateSCIMTokenRequest is the body of POST /v1/admin/scim-tokens.
type CreateSCIMTokenRequest struct {
	Name string `json:"name,omitempty"`
}
