package postgres

import (
	"context"
	"errors"
	"sort"

	"github.com/jackc/pgx/v5"
)

// ChartTags returns the OCI tags of chart name's versions in repo in
// lexical order after last, at most n (all when n < 0), and whether more
// follow: one range of the chart_versions_tag index (migration 0011).
func (db *DB) ChartTags(ctx context.Context, repo, name, last string, n int) ([]string, bool, error) {
	if !storable(repo) {
		return nil, false, repoNotFound(repo)
	}
	p, err := remember(ctx, db, db.memos.chartTags, pageKey{repo, name, last, n}, func() (*tagPage, error) {
		tags, more, err := db.chartTagPage(ctx, repo, name, last, n)
		return &tagPage{tags, more}, err
	})
	if err != nil {
		return nil, false, err
	}
	return p.tags, p.more, nil
}

// chartTagPage is ChartTags from the database.
func (db *DB) chartTagPage(ctx context.Context, repo, name, last string, n int) ([]string, bool, error) {
	tags := []string{}
	var id string
	err := db.pool.QueryRow(ctx, `SELECT id FROM repositories WHERE name = $1`, repo).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, repoNotFound(repo)
	} else if err != nil {
		return nil, false, db.wrap("list chart tags", err)
	}
	if !storable(name, last) {
		return tags, false, nil
	}
	limit := int64(-1)
	if n >= 0 {
		limit = int64(n) + 1
	}
	// The expression is the index's, word for word, so the planner uses
	// it for both the range and the order.
	rows, err := db.pool.Query(ctx, `SELECT replace(version, '+', '_') FROM chart_versions
		WHERE repository_id = $1 AND name = $2 AND replace(version, '+', '_') > $3 AND held_until IS NULL
		ORDER BY replace(version, '+', '_')
		LIMIT CASE WHEN $4::bigint < 0 THEN NULL ELSE $4::bigint END`, id, name, last, limit)
	if err != nil {
		return nil, false, db.wrap("list chart tags", err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, false, db.wrap("list chart tags", err)
	}
	more := n >= 0 && len(got) > n
	if more {
		got = got[:n]
	}
	return append(tags, got...), more, nil
}

// ChartNames returns every chart holding a version, as repository "/"
// chart, sorted. A loose index scan (one probe of the primary key per
// chart) finds the distinct charts without visiting their versions.
func (db *DB) ChartNames(ctx context.Context) ([]string, error) {
	rows, err := db.pool.Query(ctx, `WITH RECURSIVE c(repository_id, name) AS (
			(SELECT repository_id, name FROM chart_versions WHERE held_until IS NULL ORDER BY repository_id, name LIMIT 1)
			UNION ALL
			SELECT n.repository_id, n.name FROM c, LATERAL (
				SELECT repository_id, name FROM chart_versions v
				WHERE (v.repository_id, v.name) > (c.repository_id, c.name) AND v.held_until IS NULL
				ORDER BY repository_id, name LIMIT 1) n
		)
		SELECT r.name || '/' || c.name FROM c JOIN repositories r ON r.id = c.repository_id`)
	if err != nil {
		return nil, db.wrap("list chart names", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, db.wrap("list chart names", err)
	}
	// Byte order, as bolt sorts (the database's may differ).
	sort.Strings(names)
	return names, nil
}

// distinctNames is a loose index scan of the name column of an OCI table
// whose primary key starts with name: one probe per distinct name.
const distinctNames = `WITH RECURSIVE d(name) AS (
		(SELECT name FROM %[1]s ORDER BY name LIMIT 1)
		UNION ALL
		SELECT (SELECT t.name FROM %[1]s t WHERE t.name > d.name ORDER BY t.name LIMIT 1) FROM d WHERE d.name IS NOT NULL
	)
	SELECT name FROM d WHERE name IS NOT NULL`
