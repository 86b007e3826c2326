package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Trust material and verification records (issue #30).

const prefixTrust = "trust_"

// verificationJSON is the verification column of chart_versions; the
// names match bolt's record, so both stores read alike.
type verificationJSON struct {
	Status     string          `json:"status"`
	Signatures []signatureJSON `json:"signatures,omitempty"`
	CheckedAt  time.Time       `json:"checked_at"`
}

type signatureJSON struct {
	Kind       string     `json:"kind"`
	Identity   string     `json:"identity,omitempty"`
	Trust      string     `json:"trust,omitempty"`
	VerifiedAt *time.Time `json:"verified_at,omitempty"`
	Reason     string     `json:"reason,omitempty"`
}

// encodeVerification returns the column value for v: NULL for nil.
func encodeVerification(v *chartctl.Verification) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	j := verificationJSON{Status: v.Status, CheckedAt: v.CheckedAt.UTC()}
	for _, s := range v.Signatures {
		j.Signatures = append(j.Signatures, signatureJSON(s))
	}
	return json.Marshal(j)
}

func decodeVerification(b []byte) (*chartctl.Verification, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var j verificationJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, err
	}
	v := &chartctl.Verification{Status: j.Status, CheckedAt: j.CheckedAt.UTC()}
	for _, s := range j.Signatures {
		s.VerifiedAt = utcPtr(s.VerifiedAt)
		v.Signatures = append(v.Signatures, chartctl.Signature(s))
	}
	return v, nil
}

const trustCols = `id, scope, scope_id, name, kind, key, issuer, subject, created_by, created_at`

func scanTrust(row pgx.Row) (*chartctl.TrustEntry, error) {
	var e chartctl.TrustEntry
	if err := row.Scan(&e.ID, &e.Scope, &e.ScopeID, &e.Name, &e.Kind, &e.Key, &e.Issuer, &e.Subject, &e.CreatedBy, &e.CreatedAt); err != nil {
		return nil, err
	}
	if len(e.Key) == 0 {
		e.Key = nil
	}
	e.CreatedAt = utc(e.CreatedAt)
	return &e, nil
}

func trustScopeNotFound(scope string) error {
	if scope == chartctl.TrustScopeOrganization {
		return chartctl.Errorf(chartctl.ENOTFOUND, "Organization not found.")
	}
	return chartctl.Errorf(chartctl.ENOTFOUND, "Repository not found.")
}

// AddTrustEntry implements chartctl.TrustStore.
func (db *DB) AddTrustEntry(ctx context.Context, e *chartctl.TrustEntry) error {
	if err := db.fill(&e.ID, prefixTrust, &e.CreatedAt); err != nil {
		return err
	}
	if !storable(e.ScopeID, e.Name, e.Issuer, e.Subject) {
		return trustScopeNotFound(e.Scope)
	}
	var repoID, orgID *string
	switch e.Scope {
	case chartctl.TrustScopeRepository:
		repoID = &e.ScopeID
	case chartctl.TrustScopeOrganization:
		orgID = &e.ScopeID
	default:
		return chartctl.Invalid("scope", "Unknown trust scope %q.", e.Scope)
	}
	err := db.changing(ctx, func(q querier) error {
		_, err := q.Exec(ctx, `INSERT INTO trust_entries
			(id, scope, scope_id, repository_id, organization_id, name, kind, key, issuer, subject, created_by, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			e.ID, e.Scope, e.ScopeID, repoID, orgID, e.Name, e.Kind, e.Key, e.Issuer, e.Subject, e.CreatedBy, e.CreatedAt.UTC())
		return err
	})
	switch {
	case isForeignKey(err, "trust_entries_repository_id_fkey"), isForeignKey(err, "trust_entries_organization_id_fkey"):
		return trustScopeNotFound(e.Scope)
	case isUnique(err, "trust_entries_name"), isUnique(err, "trust_entries_pkey"):
		return chartctl.Errorf(chartctl.ECONFLICT, "A trust entry named %q already exists here; remove it first or choose another name.", e.Name)
	}
	return db.wrap("add trust entry", err)
}

// TrustEntries implements chartctl.TrustStore.
func (db *DB) TrustEntries(ctx context.Context, scope, scopeID string) ([]*chartctl.TrustEntry, error) {
	if !storable(scopeID) {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT `+trustCols+` FROM trust_entries WHERE scope = $1 AND scope_id = $2 ORDER BY name`, scope, scopeID)
	if err != nil {
		return nil, db.wrap("list trust entries", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.TrustEntry, error) { return scanTrust(r) })
	return out, db.wrap("list trust entries", err)
}

// DeleteTrustEntry implements chartctl.TrustStore.
func (db *DB) DeleteTrustEntry(ctx context.Context, scope, scopeID, name string) error {
	notFound := chartctl.Errorf(chartctl.ENOTFOUND, "No trust entry named %q here; `chartctl trust list` shows them.", name)
	if !storable(scopeID, name) {
		return notFound
	}
	err := db.changing(ctx, func(q querier) error {
		tag, err := q.Exec(ctx, `DELETE FROM trust_entries WHERE scope = $1 AND scope_id = $2 AND name = $3`, scope, scopeID, name)
		if err == nil && tag.RowsAffected() == 0 {
			return notFound
		}
		return err
	})
	return db.wrap("delete trust entry", err)
}

// SetVerification implements chartctl.TrustStore.
func (db *DB) SetVerification(ctx context.Context, repo, name, version, digest string, v *chartctl.Verification, indexEntry, indexJSON []byte) error {
	if !storable(repo, name, version, digest) {
		return chartNotFound(repo, name, version)
	}
	val, err := encodeVerification(v)
	if err != nil {
		return err
	}
	entry, entryJSON := entryPair(indexEntry, indexJSON)
	// One transaction with the repository's generation bump, so other
	// replicas refresh the version's index entry (it names the signer).
	err = db.tx(ctx, "set verification", func(tx pgx.Tx) error {
		var id string
		err := tx.QueryRow(ctx, `UPDATE chart_versions c SET verification = $5, index_entry = COALESCE($6, c.index_entry),
			index_entry_json = CASE WHEN $6::bytea IS NULL THEN c.index_entry_json ELSE $7 END
			FROM repositories r
			WHERE r.id = c.repository_id AND r.name = $1 AND c.name = $2 AND c.version = $3 AND c.digest = $4
			RETURNING c.repository_id`,
			repo, name, version, digest, val, entry, entryJSON).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Chart %s version %s not found in repository %q, or replaced while it was being verified.", name, version, repo)
		} else if err != nil {
			return err
		}
		return db.changedWithChange(ctx, tx, id, repo, name, version)
	})
	return db.wrap("set verification", err)
}

// entryPair is an index entry and its JSON object as columns: NULL for
// empty, and no JSON object without the entry it converts.
func entryPair(entry, entryJSON []byte) ([]byte, []byte) {
	if len(entry) == 0 {
		return nil, nil
	}
	if len(entryJSON) == 0 {
		return entry, nil
	}
	return entry, entryJSON
}
