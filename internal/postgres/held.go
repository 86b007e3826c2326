package postgres

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// withoutHeld returns keys without the held versions of repository id
// (a new slice when any is held: keys may be the shared cached order).
// The chart_versions_held partial index makes this one short range read.
func withoutHeld(ctx context.Context, tx pgx.Tx, id string, keys []versionKey) ([]versionKey, error) {
	rows, err := tx.Query(ctx, `SELECT name, version FROM chart_versions WHERE repository_id = $1 AND held_until IS NOT NULL`, id)
	if err != nil {
		return nil, err
	}
	held := map[[2]string]bool{}
	var name, version string
	if _, err := pgx.ForEachRow(rows, []any{&name, &version}, func() error {
		held[[2]string{name, version}] = true
		return nil
	}); err != nil {
		return nil, err
	}
	if len(held) == 0 {
		return keys, nil
	}
	out := make([]versionKey, 0, len(keys))
	for _, k := range keys {
		if !held[[2]string{k.name, k.version}] {
			out = append(out, k)
		}
	}
	return out, nil
}

// ReleaseChartVersion implements chartctl.TrustStore.
func (db *DB) ReleaseChartVersion(ctx context.Context, repo, name, version, digest string, indexEntry, indexJSON []byte) error {
	if !storable(repo, name, version, digest) {
		return chartNotFound(repo, name, version)
	}
	entry, entryJSON := entryPair(indexEntry, indexJSON)
	err := db.tx(ctx, "release chart version", func(tx pgx.Tx) error {
		id, err := lockRepo(ctx, tx, repo, false)
		if err != nil {
			return err
		}
		var held *time.Time
		err = tx.QueryRow(ctx, `SELECT held_until FROM chart_versions
			WHERE repository_id = $1 AND name = $2 AND version = $3 AND digest = $4 FOR UPDATE`,
			id, name, version, digest).Scan(&held)
		if errors.Is(err, pgx.ErrNoRows) {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Chart %s version %s not found in repository %q, or replaced while it was being released.", name, version, repo)
		} else if err != nil {
			return err
		}
		if held == nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "Chart %s version %s is not held.", name, version)
		}
		if _, err := tx.Exec(ctx, `UPDATE chart_versions SET held_until = NULL, index_entry = COALESCE($4, index_entry),
			index_entry_json = CASE WHEN $4::bytea IS NULL THEN index_entry_json ELSE $5 END
			WHERE repository_id = $1 AND name = $2 AND version = $3`, id, name, version, entry, entryJSON); err != nil {
			return err
		}
		return db.changedWithChange(ctx, tx, id, repo, name, version)
	})
	return db.wrap("release chart version", err)
}

// HeldChartVersions implements chartctl.TrustStore.
func (db *DB) HeldChartVersions(ctx context.Context, before time.Time) ([]*chartctl.ChartVersion, error) {
	rows, err := db.pool.Query(ctx, `SELECT r.name, `+qualified(chartCols)+` FROM chart_versions
		JOIN repositories r ON r.id = chart_versions.repository_id
		WHERE chart_versions.held_until IS NOT NULL AND chart_versions.held_until <= $1
		ORDER BY chart_versions.held_until, r.name, chart_versions.name, chart_versions.version`, before.UTC())
	if err != nil {
		return nil, db.wrap("list held chart versions", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.ChartVersion, error) {
		var repo string
		cv, err := scanChart("", rowPrefix{r, &repo})
		if cv != nil {
			cv.Repository = repo
		}
		return cv, err
	})
	return out, db.wrap("list held chart versions", err)
}

// rowPrefix scans a row whose first column is read into first and whose
// others are what the wrapped scan reads.
type rowPrefix struct {
	row   pgx.Row
	first *string
}

func (p rowPrefix) Scan(dest ...any) error {
	return p.row.Scan(append([]any{p.first}, dest...)...)
}

// ExpireHeldChartVersion implements chartctl.TrustStore.
func (db *DB) ExpireHeldChartVersion(ctx context.Context, repo, name, version string, now time.Time) (*chartctl.ChartVersion, []string, error) {
	var (
		deleted *chartctl.ChartVersion
		orphans []string
	)
	err := db.tx(ctx, "expire held chart version", func(tx pgx.Tx) error {
		deleted, orphans = nil, nil
		id, err := lockRepo(ctx, tx, repo, false)
		if err != nil {
			return err
		}
		if !storable(name, version) {
			return chartNotFound(repo, name, version)
		}
		deleted, err = scanChart(repo, tx.QueryRow(ctx, `DELETE FROM chart_versions
			WHERE repository_id = $1 AND name = $2 AND version = $3 AND held_until IS NOT NULL AND held_until <= $4
			RETURNING `+chartCols, id, name, version, now.UTC()))
		if errors.Is(err, pgx.ErrNoRows) {
			var one int
			if err := tx.QueryRow(ctx, `SELECT 1 FROM chart_versions WHERE repository_id = $1 AND name = $2 AND version = $3`,
				id, name, version).Scan(&one); errors.Is(err, pgx.ErrNoRows) {
				return chartNotFound(repo, name, version)
			} else if err != nil {
				return err
			}
			return chartctl.Errorf(chartctl.ECONFLICT, "Chart %s version %s is not held past its window.", name, version)
		} else if err != nil {
			return err
		}
		orphans, err = db.dropDeletedVersion(ctx, tx, id, repo, deleted)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(orphans)
	return deleted, orphans, nil
}
