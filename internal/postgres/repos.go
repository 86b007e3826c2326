package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// CreateRepository stores r, filling ID and CreatedAt when empty and
// Visibility (private) when empty. It returns EINVALID for an invalid name
// or visibility, and ENOTFOUND if r.Organization is set and does not
// exist. It returns ECONFLICT if the name is taken, or if it belonged to a
// repository of another owner deleted less than the name grace period ago
// (see NameGrace); both say only that the name is not available, so the
// message confirms nothing about a repository the caller cannot see.
func (db *DB) CreateRepository(ctx context.Context, r *chartctl.Repository) error {
	if err := chartctl.ValidateName("name", r.Name); err != nil {
		return err
	}
	if r.Visibility == "" {
		r.Visibility = chartctl.VisibilityPrivate
	}
	if !r.Visibility.Valid() {
		return chartctl.Invalid("visibility", "Invalid visibility %q: use private, internal or public.", r.Visibility)
	}
	// A caller that does not choose (a restore of an older backup, an
	// import) gets the format every repository had before formats.
	r.IndexFormat = r.IndexFormat.OrYAML()
	if !r.IndexFormat.Valid() {
		return chartctl.InvalidIndexFormat(r.IndexFormat)
	}
	if err := db.fill(&r.ID, prefixRepo, &r.CreatedAt); err != nil {
		return err
	}
	if !storable(r.Organization) {
		return orgNotFound(r.Organization)
	}
	err := db.mutate(ctx, "create repository", func(tx pgx.Tx) error {
		// The tombstone's row lock orders a claim against a concurrent
		// deletion of the same name.
		var (
			ownerID, org string
			deletedAt    time.Time
		)
		err := tx.QueryRow(ctx, `SELECT owner_id, organization, deleted_at FROM repository_tombstones
			WHERE name = $1 FOR UPDATE`, r.Name).Scan(&ownerID, &org, &deletedAt)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		default:
			sameOwner := org == r.Organization && (org != "" || ownerID == r.OwnerID)
			if !sameOwner && db.now().Before(deletedAt.Add(db.nameGrace)) {
				return nameNotAvailable(r.Name)
			}
			if _, err := tx.Exec(ctx, `DELETE FROM repository_tombstones WHERE name = $1`, r.Name); err != nil {
				return err
			}
		}
		// The unique index on the name is checked before the foreign key,
		// so a taken name is a conflict whatever the organization, as in
		// bolt.
		ah, err := encodeArtifactHub(r.ArtifactHub)
		if err != nil {
			return err
		}
		proxy, err := proxyJSON(r.Proxy)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO repositories (id, name, description, organization, owner_id, visibility, created_at, index_format, artifacthub, proxy)
			VALUES ($1, $2, $3, NULLIF($4, ''), $5, $6, $7, $8, $9, $10)`,
			r.ID, r.Name, text(r.Description), r.Organization, r.OwnerID, string(r.Visibility), r.CreatedAt, string(r.IndexFormat), ah, proxy)
		if err != nil {
			return err
		}
		if m := r.Mirror; m != nil {
			if err := setMirror(ctx, tx, r.ID, m.MirrorSettings); err != nil {
				return err
			}
			if err := setMirrorState(ctx, tx, r.ID, m.MirrorState); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO usage (scope, name) VALUES ('repository', $1)
			ON CONFLICT (scope, name) DO UPDATE SET bytes = 0, versions = 0`, r.Name)
		return err
	})
	switch {
	case isUnique(err, "repositories_name_key"):
		return nameNotAvailable(r.Name)
	case isUnique(err, "repositories_pkey"):
		return chartctl.Errorf(chartctl.ECONFLICT, "A repository with ID %q already exists.", r.ID)
	case isForeignKey(err, "repositories_organization_fkey"):
		return orgNotFound(r.Organization)
	}
	return err
}

const repoCols = `id, name, description, COALESCE(organization, ''), owner_id, visibility, index_format, created_at,
	mirror_url, mirror_interval_seconds, mirror_username, mirror_password, mirror_status, mirror_last_sync_at,
	mirror_last_attempt_at, mirror_error, artifacthub, proxy`

func scanRepo(row pgx.Row) (*chartctl.Repository, error) {
	var (
		r         chartctl.Repository
		vis       string
		mirrorURL *string
		m         chartctl.Mirror
		interval  int64
		status    string
		ah        []byte
		proxy     []byte
	)
	if err := row.Scan(&r.ID, &r.Name, &r.Description, &r.Organization, &r.OwnerID, &vis, &r.IndexFormat, &r.CreatedAt,
		&mirrorURL, &interval, &m.Username, &m.Password, &status, &m.LastSyncAt, &m.LastAttemptAt, &m.Error, &ah, &proxy); err != nil {
		return nil, err
	}
	var err error
	if r.ArtifactHub, err = decodeArtifactHub(ah); err != nil {
		return nil, err
	}
	if len(proxy) > 0 {
		var rec proxyRecord
		if err := json.Unmarshal(proxy, &rec); err != nil {
			return nil, fmt.Errorf("repository %s: proxy settings: %w", r.Name, err)
		}
		r.Proxy = rec.domain()
	}
	r.Visibility, r.CreatedAt = chartctl.Visibility(vis), utc(r.CreatedAt)
	if mirrorURL != nil {
		m.URL, m.Interval, m.Status = *mirrorURL, time.Duration(interval)*time.Second, chartctl.MirrorStatus(status)
		m.LastSyncAt, m.LastAttemptAt = utcPtr(m.LastSyncAt), utcPtr(m.LastAttemptAt)
		if len(m.Password) == 0 {
			m.Password = nil
		}
		r.Mirror = &m
	}
	return &r, nil
}

// Repository returns the repository named name. It returns ENOTFOUND if
// none.
func (db *DB) Repository(ctx context.Context, name string) (*chartctl.Repository, error) {
	if !storable(name) {
		return nil, repoNotFound(name)
	}
	r, err := scanRepo(db.pool.QueryRow(ctx, `SELECT `+repoCols+` FROM repositories WHERE name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, repoNotFound(name)
	}
	return r, db.wrap("get repository", err)
}

// Repositories returns every repository, by name.
func (db *DB) Repositories(ctx context.Context) ([]*chartctl.Repository, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+repoCols+` FROM repositories ORDER BY name`)
	if err != nil {
		return nil, db.wrap("list repositories", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.Repository, error) { return scanRepo(r) })
	return out, db.wrap("list repositories", err)
}

// DeleteRepository deletes the repository, all its chart versions, what
// is bound to it (webhooks with their deliveries and retention policy by
// foreign key, quota, usage and upload sessions here) and the OCI
// registry's manifests, tags and blob links of the names under it in one
// transaction, returning (sorted) the blob digests no record refers
// to any more, and reserves its name for its owner for the name grace
// period (purging the reservations that have expired). It returns
// ENOTFOUND if the repository does not exist.
func (db *DB) DeleteRepository(ctx context.Context, name string) ([]string, error) {
	if !storable(name) {
		return nil, repoNotFound(name)
	}
	var orphans []string
	err := db.mutate(ctx, "delete repository", func(tx pgx.Tx) error {
		orphans = nil
		// The row lock waits for uploads into the repository to commit
		// (they hold it FOR KEY SHARE) and keeps new ones out.
		id, err := lockRepo(ctx, tx, name, true)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT digest, prov_digest FROM chart_versions WHERE repository_id = $1`, id)
		if err != nil {
			return err
		}
		delta := map[string]int64{}
		var digest, prov string
		if _, err := pgx.ForEachRow(rows, []any{&digest, &prov}, func() error {
			delta[digest]--
			if prov != "" {
				delta[prov]--
			}
			return nil
		}); err != nil {
			return err
		}
		drop, err := repoUsage(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := db.putTombstone(ctx, tx, name); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM repositories WHERE id = $1`, id); err != nil {
			return err
		}
		if err := db.notify(ctx, tx, indexChange{Repo: name, Gen: -1}); err != nil {
			return err
		}
		if orphans, err = adjustRefs(ctx, tx, delta); err != nil {
			return err
		}
		unlinked, err := deleteOCIRepo(ctx, tx, name, id)
		if err != nil {
			return err
		}
		if len(unlinked) > 0 {
			rows, err := tx.Query(ctx, `SELECT d FROM unnest($1::text[]) AS u(d)
				WHERE NOT EXISTS (SELECT 1 FROM oci_blob_links WHERE digest = u.d)
				AND NOT EXISTS (SELECT 1 FROM blob_refs WHERE digest = u.d)`, unlinked)
			if err != nil {
				return err
			}
			more, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			orphans = append(orphans, more...)
		}
		return dropRepoUsage(ctx, tx, drop, name)
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(orphans)
	return slices.Compact(orphans), nil
}

// lockRepo returns the ID of the repository named name, locking its row:
// FOR UPDATE when the repository is about to go, FOR KEY SHARE otherwise
// (so writers of its versions run side by side but never beside its
// deletion). It returns ENOTFOUND if none.
func lockRepo(ctx context.Context, tx pgx.Tx, name string, exclusive bool) (string, error) {
	if !storable(name) {
		return "", repoNotFound(name)
	}
	lock := "FOR KEY SHARE"
	if exclusive {
		lock = "FOR UPDATE"
	}
	var id string
	err := tx.QueryRow(ctx, `SELECT id FROM repositories WHERE name = $1 `+lock, name).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", repoNotFound(name)
	}
	return id, err
}

// repoID returns the ID of the repository named name. It returns ENOTFOUND
// if none.
func repoID(ctx context.Context, q querier, name string) (string, error) {
	if !storable(name) {
		return "", repoNotFound(name)
	}
	var id string
	err := q.QueryRow(ctx, `SELECT id FROM repositories WHERE name = $1`, name).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", repoNotFound(name)
	}
	return id, err
}

// nameNotAvailable is the conflict for a repository, organization or team
// name that is taken. It is the same whatever took the name, so it tells
// nothing about a resource the caller cannot see.
func nameNotAvailable(name string) error {
	return chartctl.Errorf(chartctl.ECONFLICT, "The name %q is not available.", name)
}

// putTombstone reserves the name of the repository being deleted for its
// owner, and purges the reservations whose grace period has passed.
func (db *DB) putTombstone(ctx context.Context, tx pgx.Tx, name string) error {
	now := db.now()
	if _, err := tx.Exec(ctx, `DELETE FROM repository_tombstones WHERE deleted_at <= $1`, now.Add(-db.nameGrace)); err != nil {
		return err
	}
	if db.nameGrace <= 0 {
		_, err := tx.Exec(ctx, `DELETE FROM repository_tombstones WHERE name = $1`, name)
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO repository_tombstones (name, owner_id, organization, deleted_at)
		SELECT name, owner_id, COALESCE(organization, ''), $2 FROM repositories WHERE name = $1
		ON CONFLICT (name) DO UPDATE SET owner_id = EXCLUDED.owner_id, organization = EXCLUDED.organization,
			deleted_at = EXCLUDED.deleted_at`, name, now)
	return err
}

func repoNotFound(name string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Repository %q not found.", name)
}

// UpdateRepository changes the description and visibility of the
// repository named name (nil leaves a field as is) and returns it. Other
// replicas hear of the change (their cached records of the repository are
// dropped). It returns ENOTFOUND, and EINVALID for an invalid visibility.
func (db *DB) UpdateRepository(ctx context.Context, name string, u chartctl.RepositoryUpdate) (*chartctl.Repository, error) {
	description, visibility := u.Description, u.Visibility
	if visibility != nil && !visibility.Valid() {
		return nil, chartctl.Invalid("visibility", "Invalid visibility %q: use private, internal or public.", *visibility)
	}
	if u.IndexFormat != nil && !u.IndexFormat.Valid() {
		return nil, chartctl.InvalidIndexFormat(*u.IndexFormat)
	}
	var format *string
	if u.IndexFormat != nil {
		f := string(*u.IndexFormat)
		format = &f
	}
	if !storable(name) {
		return nil, repoNotFound(name)
	}
	var desc, vis *string
	if description != nil {
		d := text(*description)
		desc = &d
	}
	if visibility != nil {
		v := string(*visibility)
		vis = &v
	}
	ah, err := encodeArtifactHub(u.ArtifactHub)
	if err != nil {
		return nil, err
	}
	proxy, err := proxyJSON(u.Proxy)
	if err != nil {
		return nil, err
	}
	var out *chartctl.Repository
	err = db.mutate(ctx, "update repository", func(tx pgx.Tx) error {
		if proxy != nil {
			var isProxy bool
			err := tx.QueryRow(ctx, `SELECT proxy IS NOT NULL FROM repositories WHERE name = $1 FOR UPDATE`, name).Scan(&isProxy)
			if errors.Is(err, pgx.ErrNoRows) {
				return repoNotFound(name)
			} else if err != nil {
				return err
			}
			if !isProxy {
				return chartctl.Invalid("proxy", "Repository %q is not a proxy: a repository is created as a proxy (or not) and stays so.", name)
			}
		}
		r, err := scanRepo(tx.QueryRow(ctx, `UPDATE repositories SET description = COALESCE($2, description),
			visibility = COALESCE($3, visibility), index_format = COALESCE($4, index_format), proxy = COALESCE($5, proxy),
			artifacthub = CASE WHEN $6 THEN $7::jsonb ELSE artifacthub END
			WHERE name = $1 RETURNING `+repoCols, name, desc, vis, format, proxy, u.ArtifactHub != nil, ah))
		if errors.Is(err, pgx.ErrNoRows) {
			return repoNotFound(name)
		} else if err != nil {
			return err
		}
		out = r
		return db.changed(ctx, tx, r.ID, name, "", "")
	})
	return out, err
}

// proxyRecord is a proxy repository's settings as the proxy column keeps
// them (the same document as bolt's). Password is sealed by the
// application before it gets here.
type proxyRecord struct {
	URL              string   `json:"url"`
	Username         string   `json:"username,omitempty"`
	Password         []byte   `json:"password,omitempty"`
	TTLSeconds       int64    `json:"ttl_seconds"`
	RetentionSeconds int64    `json:"retention_seconds,omitempty"`
	Include          []string `json:"include,omitempty"`
	Exclude          []string `json:"exclude,omitempty"`
}

func (p *proxyRecord) domain() *chartctl.Proxy {
	return (&chartctl.Proxy{URL: p.URL, Username: p.Username, Password: p.Password, TTL: time.Duration(p.TTLSeconds) * time.Second, Retention: time.Duration(p.RetentionSeconds) * time.Second,
		Include: p.Include, Exclude: p.Exclude}).Clone()
}

// proxyJSON is p as the proxy column keeps it; nil for nil.
func proxyJSON(p *chartctl.Proxy) ([]byte, error) {
	if p == nil {
		return nil, nil
	}
	return json.Marshal(proxyRecord{URL: p.URL, Username: p.Username, Password: p.Password, TTLSeconds: int64(p.TTL / time.Second), RetentionSeconds: int64(p.Retention / time.Second),
		Include: p.Include, Exclude: p.Exclude})
}
