package postgres

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

const (
	prefixSCIMToken = "scimtok_"
	prefixSCIMGroup = "scimgrp_"
)

const scimTokenCols = `id, name, hash, created_by, created_at, last_used_at`

func scanSCIMToken(row pgx.Row) (*chartctl.SCIMToken, error) {
	var t chartctl.SCIMToken
	if err := row.Scan(&t.ID, &t.Name, &t.Hash, &t.CreatedBy, &t.CreatedAt, &t.LastUsedAt); err != nil {
		return nil, err
	}
	t.CreatedAt, t.LastUsedAt = utc(t.CreatedAt), utcPtr(t.LastUsedAt)
	return &t, nil
}

func scimTokenNotFound() error { return chartctl.Errorf(chartctl.ENOTFOUND, "SCIM token not found.") }

// CreateSCIMToken implements chartctl.SCIMStore.
func (db *DB) CreateSCIMToken(ctx context.Context, t *chartctl.SCIMToken) error {
	if len(t.Hash) == 0 {
		return chartctl.Invalid("token", "A SCIM token needs a hash.")
	}
	if err := db.fill(&t.ID, prefixSCIMToken, &t.CreatedAt); err != nil {
		return err
	}
	err := db.changing(ctx, func(q querier) error {
		_, err := q.Exec(ctx, `INSERT INTO scim_tokens (`+scimTokenCols+`) VALUES ($1, $2, $3, $4, $5, $6)`,
			t.ID, text(t.Name), t.Hash, text(t.CreatedBy), t.CreatedAt, t.LastUsedAt)
		return err
	})
	switch {
	case isUnique(err, "scim_tokens_pkey"):
		return chartctl.Errorf(chartctl.ECONFLICT, "A SCIM token with ID %q already exists.", t.ID)
	case isUnique(err, "scim_tokens_hash_key"):
		return chartctl.Errorf(chartctl.ECONFLICT, "A SCIM token with this value already exists.")
	}
	return db.wrap("create scim token", err)
}

// SCIMTokens implements chartctl.SCIMStore.
func (db *DB) SCIMTokens(ctx context.Context) ([]*chartctl.SCIMToken, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+scimTokenCols+` FROM scim_tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, db.wrap("list scim tokens", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.SCIMToken, error) { return scanSCIMToken(r) })
	return out, db.wrap("list scim tokens", err)
}

// SCIMTokenByHash implements chartctl.SCIMStore.
func (db *DB) SCIMTokenByHash(ctx context.Context, hash []byte) (*chartctl.SCIMToken, error) {
	t, err := scanSCIMToken(db.pool.QueryRow(ctx, `SELECT `+scimTokenCols+` FROM scim_tokens WHERE hash = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, scimTokenNotFound()
	}
	return t, db.wrap("get scim token", err)
}

// TouchSCIMToken implements chartctl.SCIMStore.
func (db *DB) TouchSCIMToken(ctx context.Context, id string, t time.Time) error {
	if !storable(id) {
		return nil
	}
	_, err := db.pool.Exec(ctx, `UPDATE scim_tokens SET last_used_at = $2 WHERE id = $1`, id, t.UTC())
	return db.wrap("touch scim token", err)
}

// DeleteSCIMToken implements chartctl.SCIMStore.
func (db *DB) DeleteSCIMToken(ctx context.Context, id string) error {
	if !storable(id) {
		return scimTokenNotFound()
	}
	err := db.changing(ctx, func(q querier) error {
		tag, err := q.Exec(ctx, `DELETE FROM scim_tokens WHERE id = $1`, id)
		if err == nil && tag.RowsAffected() == 0 {
			return scimTokenNotFound()
		}
		return err
	})
	return db.wrap("delete scim token", err)
}

const scimGroupCols = `id, display_name, external_id, members, created_at, updated_at`

func scanSCIMGroup(row pgx.Row) (*chartctl.SCIMGroup, error) {
	var g chartctl.SCIMGroup
	if err := row.Scan(&g.ID, &g.DisplayName, &g.ExternalID, &g.Members, &g.CreatedAt, &g.UpdatedAt); err != nil {
		return nil, err
	}
	g.Members = groupsOf(g.Members)
	g.CreatedAt, g.UpdatedAt = utc(g.CreatedAt), utc(g.UpdatedAt)
	return &g, nil
}

func scimGroupNotFound(id string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Group %q not found.", id)
}

// PutSCIMGroup implements chartctl.SCIMStore.
func (db *DB) PutSCIMGroup(ctx context.Context, g *chartctl.SCIMGroup) error {
	if g.DisplayName == "" || !storable(g.DisplayName) {
		return chartctl.Invalid("displayName", "A group needs a displayName.")
	}
	if err := db.fill(&g.ID, prefixSCIMGroup, &g.CreatedAt); err != nil {
		return err
	}
	if g.UpdatedAt.IsZero() {
		g.UpdatedAt = g.CreatedAt
	}
	members := slices.Clone(g.Members)
	slices.Sort(members)
	g.Members = slices.Compact(members)
	err := db.changing(ctx, func(q querier) error {
		_, err := q.Exec(ctx, `INSERT INTO scim_groups (`+scimGroupCols+`) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (id) DO UPDATE SET display_name = $2, external_id = $3, members = $4, updated_at = $6`,
			g.ID, g.DisplayName, text(g.ExternalID), groupCol(g.Members), g.CreatedAt, g.UpdatedAt)
		return err
	})
	if isUnique(err, "scim_groups_display_name_key") {
		return chartctl.Errorf(chartctl.ECONFLICT, "A group named %q already exists.", g.DisplayName)
	}
	return db.wrap("put scim group", err)
}

// SCIMGroup implements chartctl.SCIMStore.
func (db *DB) SCIMGroup(ctx context.Context, id string) (*chartctl.SCIMGroup, error) {
	if !storable(id) {
		return nil, scimGroupNotFound(id)
	}
	g, err := scanSCIMGroup(db.pool.QueryRow(ctx, `SELECT `+scimGroupCols+` FROM scim_groups WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, scimGroupNotFound(id)
	}
	return g, db.wrap("get scim group", err)
}

// SCIMGroups implements chartctl.SCIMStore.
func (db *DB) SCIMGroups(ctx context.Context) ([]*chartctl.SCIMGroup, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+scimGroupCols+` FROM scim_groups ORDER BY display_name`)
	if err != nil {
		return nil, db.wrap("list scim groups", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.SCIMGroup, error) { return scanSCIMGroup(r) })
	return out, db.wrap("list scim groups", err)
}

// DeleteSCIMGroup implements chartctl.SCIMStore.
func (db *DB) DeleteSCIMGroup(ctx context.Context, id string) error {
	if !storable(id) {
		return scimGroupNotFound(id)
	}
	err := db.changing(ctx, func(q querier) error {
		tag, err := q.Exec(ctx, `DELETE FROM scim_groups WHERE id = $1`, id)
		if err == nil && tag.RowsAffected() == 0 {
			return scimGroupNotFound(id)
		}
		return err
	})
	return db.wrap("delete scim group", err)
}
