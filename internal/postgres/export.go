package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Ensure DB dumps its records.
var _ chartctl.Exporter = (*DB)(nil)

// Export calls fn with every record, all read in one read-only REPEATABLE
// READ transaction: a consistent snapshot that writers (on any replica)
// do not wait for. Records come in dependency order. OAuth codes, tokens,
// grants and web sessions are short-lived credentials and are not
// exported (people sign in again after a restore), as in bolt.
func (db *DB) Export(ctx context.Context, snapshot func(), fn func(chartctl.DumpRecord) error) error {
	called := false
	return db.readTx(ctx, "export", func(tx pgx.Tx) error {
		if called {
			// A retry after a dropped connection: fn has seen records
			// already, and must not see them twice.
			return chartctl.Errorf(chartctl.EUNAVAILABLE, "The database connection was lost during the export; run it again.")
		}
		called = true
		// The snapshot is taken by the first statement, not by BEGIN.
		if _, err := tx.Exec(ctx, `SELECT 1`); err != nil {
			return err
		}
		if snapshot != nil {
			snapshot()
		}
		steps := []struct {
			sql string
			one func(pgx.Rows) error
		}{
			{`SELECT ` + userCols + ` FROM users ORDER BY id`, func(r pgx.Rows) error {
				u, err := scanUser(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{User: u})
			}},
			{`SELECT ` + apiKeyCols + ` FROM api_keys ORDER BY id`, func(r pgx.Rows) error {
				k, err := scanAPIKey(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{APIKey: k})
			}},
			{`SELECT id, name, redirect_uris, public, secret_hash, created_at FROM oauth_clients ORDER BY id`, func(r pgx.Rows) error {
				var c chartctl.OAuthClient
				if err := r.Scan(&c.ID, &c.Name, &c.RedirectURIs, &c.Public, &c.SecretHash, &c.CreatedAt); err != nil {
					return err
				}
				c.RedirectURIs, c.SecretHash = nilIfEmpty(c.RedirectURIs), nilIfEmpty(c.SecretHash)
				c.CreatedAt = utc(c.CreatedAt)
				return fn(chartctl.DumpRecord{OAuthClient: &c})
			}},
			{`SELECT ` + orgCols + ` FROM organizations ORDER BY name`, func(r pgx.Rows) error {
				o, err := scanOrg(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Organization: o})
			}},
			{`SELECT ` + repoCols + ` FROM repositories ORDER BY name`, func(r pgx.Rows) error {
				rp, err := scanRepo(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Repository: rp})
			}},
			{`SELECT ` + teamCols + ` FROM teams t ORDER BY t.name`, func(r pgx.Rows) error {
				t, err := scanTeam(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Team: t})
			}},
			{`SELECT ` + memberCols + ` FROM members m JOIN teams t ON t.id = m.team_id ORDER BY t.name, m.id`, func(r pgx.Rows) error {
				m, err := scanMember(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Member: m})
			}},
		}
		for _, s := range steps {
			rows, err := tx.Query(ctx, s.sql)
			if err != nil {
				return err
			}
			for rows.Next() {
				if err := s.one(rows); err != nil {
					rows.Close()
					return err
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, `SELECT r.name, `+qualified(chartCols)+`, chart_versions.index_entry
			FROM chart_versions JOIN repositories r ON r.id = chart_versions.repository_id
			ORDER BY r.name, chart_versions.name, chart_versions.version`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			cv, err := scanExportChart(rows)
			if err != nil {
				return err
			}
			if err := fn(chartctl.DumpRecord{ChartVersion: cv}); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

// scanExportChart reads repository name, chartCols and index_entry.
func scanExportChart(row pgx.Row) (*chartctl.ChartVersion, error) {
	cv := &chartctl.ChartVersion{}
	var metadata, entry []byte
	if err := row.Scan(&cv.Repository, &cv.Name, &cv.Version, &cv.AppVersion, &cv.Description, &cv.Keywords,
		&cv.Digest, &cv.ContentDigest, &cv.Size, &cv.ProvDigest, &cv.ProvSize, &cv.CreatedAt, &metadata, &entry); err != nil {
		return nil, err
	}
	cv.Keywords = nilIfEmpty(cv.Keywords)
	cv.CreatedAt = utc(cv.CreatedAt)
	if len(metadata) > 0 {
		cv.Metadata = metadata
	}
	if len(entry) > 0 {
		cv.IndexEntry = entry
	}
	return cv, nil
}
