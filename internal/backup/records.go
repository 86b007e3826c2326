package backup

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// The records of records.jsonl: one JSON object per line, {"kind", "data"}.
// Their field names are this format's own (version 1), independent of any
// engine's storage and of Go field names.

// Record kinds.
const (
	KindUser         = "user"
	KindAPIKey       = "api_key"
	KindOAuthClient  = "oauth_client"
	KindOrganization = "organization"
	KindRepository   = "repository"
	KindTeam         = "team"
	KindMember       = "member"
	KindChartVersion = "chart_version"
)

type line struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

type userV1 struct {
	ID           string    `json:"id"`
	Email        string    `json:"email"`
	PasswordHash string    `json:"password_hash,omitempty"`
	Admin        bool      `json:"admin"`
	CreatedAt    time.Time `json:"created_at"`
}

type apiKeyV1 struct {
	ID         string     `json:"id"`
	UserID     string     `json:"user_id"`
	Name       string     `json:"name"`
	Scopes     []string   `json:"scopes"`
	Hash       []byte     `json:"hash"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
}

type oauthClientV1 struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	RedirectURIs []string  `json:"redirect_uris"`
	Public       bool      `json:"public"`
	SecretHash   []byte    `json:"secret_hash,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
}

type organizationV1 struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	CreatedBy   string    `json:"created_by,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

type repositoryV1 struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	Description  string    `json:"description,omitempty"`
	Organization string    `json:"organization,omitempty"`
	OwnerID      string    `json:"owner_id,omitempty"`
	Visibility   string    `json:"visibility"`
	CreatedAt    time.Time `json:"created_at"`
	// Mirror is set for a mirror repository; backups written before
	// mirrors existed have none.
	Mirror *mirrorV1 `json:"mirror,omitempty"`
}

// mirrorV1 is a mirror's settings and sync state. The password stays
// sealed with the server's secrets key (CONTRACT §12: backups carry
// secrets encrypted), so a restore needs the same key to sync.
type mirrorV1 struct {
	URL             string     `json:"url"`
	IntervalSeconds int64      `json:"interval_seconds"`
	Username        string     `json:"username,omitempty"`
	SealedPassword  []byte     `json:"sealed_password,omitempty"`
	Status          string     `json:"status"`
	LastSyncAt      *time.Time `json:"last_sync_at,omitempty"`
	LastAttemptAt   *time.Time `json:"last_attempt_at,omitempty"`
	Error           string     `json:"error,omitempty"`
}

func newMirrorV1(m *chartctl.Mirror) *mirrorV1 {
	if m == nil {
		return nil
	}
	return &mirrorV1{URL: m.URL, IntervalSeconds: int64(m.Interval / time.Second), Username: m.Username, SealedPassword: m.Password,
		Status: string(m.Status), LastSyncAt: m.LastSyncAt, LastAttemptAt: m.LastAttemptAt, Error: m.Error}
}

func (m *mirrorV1) domain() *chartctl.Mirror {
	if m == nil {
		return nil
	}
	return &chartctl.Mirror{
		MirrorSettings: chartctl.MirrorSettings{URL: m.URL, Interval: time.Duration(m.IntervalSeconds) * time.Second, Username: m.Username, Password: m.SealedPassword},
		MirrorState:    chartctl.MirrorState{Status: chartctl.MirrorStatus(m.Status), LastSyncAt: m.LastSyncAt, LastAttemptAt: m.LastAttemptAt, Error: m.Error},
	}
}

type teamV1 struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	Organization string    `json:"organization"`
	Description  string    `json:"description,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
}

type memberV1 struct {
	ID      string    `json:"id"`
	Team    string    `json:"team"`
	Email   string    `json:"email"`
	Role    string    `json:"role"`
	AddedAt time.Time `json:"added_at"`
}

type chartVersionV1 struct {
	Repository  string          `json:"repository"`
	Name        string          `json:"name"`
	Version     string          `json:"version"`
	AppVersion  string          `json:"app_version,omitempty"`
	Description string          `json:"description,omitempty"`
	Keywords    []string        `json:"keywords,omitempty"`
	Digest      string          `json:"digest"`
	Size        int64           `json:"size"`
	ProvDigest  string          `json:"prov_digest,omitempty"`
	CreatedAt   time.Time       `json:"created_at"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	IndexEntry  []byte          `json:"index_entry,omitempty"`
}

// encodeRecord turns a dump record into one line of records.jsonl.
func encodeRecord(r chartctl.DumpRecord) ([]byte, error) {
	var kind string
	var v any
	switch {
	case r.User != nil:
		u := r.User
		kind, v = KindUser, userV1{u.ID, u.Email, u.PasswordHash, u.Admin, u.CreatedAt}
	case r.APIKey != nil:
		k := r.APIKey
		kind, v = KindAPIKey, apiKeyV1{k.ID, k.UserID, k.Name, k.Scopes.Strings(), k.Hash, k.CreatedAt, k.LastUsedAt, k.ExpiresAt}
	case r.OAuthClient != nil:
		c := r.OAuthClient
		kind, v = KindOAuthClient, oauthClientV1{c.ID, c.Name, c.RedirectURIs, c.Public, c.SecretHash, c.CreatedAt}
	case r.Organization != nil:
		o := r.Organization
		kind, v = KindOrganization, organizationV1{o.ID, o.Name, o.Description, o.CreatedBy, o.CreatedAt}
	case r.Repository != nil:
		p := r.Repository
		kind, v = KindRepository, repositoryV1{p.ID, p.Name, p.Description, p.Organization, p.OwnerID, string(p.Visibility), p.CreatedAt, newMirrorV1(p.Mirror)}
	case r.Team != nil:
		t := r.Team
		kind, v = KindTeam, teamV1{t.ID, t.Name, t.Organization, t.Description, t.CreatedAt}
	case r.Member != nil:
		m := r.Member
		kind, v = KindMember, memberV1{m.ID, m.Team, m.Email, string(m.Role), m.AddedAt}
	case r.ChartVersion != nil:
		c := r.ChartVersion
		kind, v = KindChartVersion, chartVersionV1{c.Repository, c.Name, c.Version, c.AppVersion, c.Description, c.Keywords,
			c.Digest, c.Size, c.ProvDigest, c.CreatedAt, c.Metadata, c.IndexEntry}
	default:
		return nil, fmt.Errorf("empty dump record")
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(line{Kind: kind, Data: data})
	return append(b, '\n'), err
}

// decodeRecord reads one line of records.jsonl.
func decodeRecord(b []byte) (chartctl.DumpRecord, string, error) {
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return chartctl.DumpRecord{}, "", err
	}
	var r chartctl.DumpRecord
	var err error
	switch l.Kind {
	case KindUser:
		var v userV1
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.User = &chartctl.User{ID: v.ID, Email: v.Email, PasswordHash: v.PasswordHash, Admin: v.Admin, CreatedAt: v.CreatedAt}
		}
	case KindAPIKey:
		var v apiKeyV1
		if err = json.Unmarshal(l.Data, &v); err == nil {
			var sc chartctl.Scopes
			if sc, err = chartctl.NewScopes("scopes", v.Scopes); err == nil {
				r.APIKey = &chartctl.APIKey{ID: v.ID, UserID: v.UserID, Name: v.Name, Scopes: sc, Hash: v.Hash, CreatedAt: v.CreatedAt, LastUsedAt: v.LastUsedAt, ExpiresAt: v.ExpiresAt}
			}
		}
	case KindOAuthClient:
		var v oauthClientV1
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.OAuthClient = &chartctl.OAuthClient{ID: v.ID, Name: v.Name, RedirectURIs: v.RedirectURIs, Public: v.Public, SecretHash: v.SecretHash, CreatedAt: v.CreatedAt}
		}
	case KindOrganization:
		var v organizationV1
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.Organization = &chartctl.Organization{ID: v.ID, Name: v.Name, Description: v.Description, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt}
		}
	case KindRepository:
		var v repositoryV1
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.Repository = &chartctl.Repository{ID: v.ID, Name: v.Name, Description: v.Description, Organization: v.Organization, OwnerID: v.OwnerID,
				Visibility: chartctl.Visibility(v.Visibility), CreatedAt: v.CreatedAt, Mirror: v.Mirror.domain()}
		}
	case KindTeam:
		var v teamV1
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.Team = &chartctl.Team{ID: v.ID, Name: v.Name, Organization: v.Organization, Description: v.Description, CreatedAt: v.CreatedAt}
		}
	case KindMember:
		var v memberV1
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.Member = &chartctl.Member{ID: v.ID, Team: v.Team, Email: v.Email, Role: chartctl.Role(v.Role), AddedAt: v.AddedAt}
		}
	case KindChartVersion:
		var v chartVersionV1
		if err = json.Unmarshal(l.Data, &v); err == nil {
			r.ChartVersion = &chartctl.ChartVersion{Repository: v.Repository, Name: v.Name, Version: v.Version, AppVersion: v.AppVersion,
				Description: v.Description, Keywords: v.Keywords, Digest: v.Digest, Size: v.Size, ProvDigest: v.ProvDigest,
				CreatedAt: v.CreatedAt, Metadata: v.Metadata, IndexEntry: v.IndexEntry}
		}
	default:
		return r, l.Kind, fmt.Errorf("unknown record kind %q", l.Kind)
	}
	return r, l.Kind, err
}
