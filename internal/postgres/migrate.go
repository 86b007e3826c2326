package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The schema migrations, applied in order of their number: NNNN_name.sql.
// A migration is never edited once released; a change is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the key of the session-level advisory lock held while
// migrating ("chartctl" in ASCII), so that replicas starting together
// migrate once: the first takes the lock and migrates, the others wait and
// then find nothing to do.
const migrationLock int64 = 0x6368617274637463

// SchemaError is returned by Open when the database's schema is newer than
// this binary knows: an older chartctl must not write to it.
type SchemaError struct {
	// Database is the database's schema version; Supported is the newest
	// this binary knows.
	Database, Supported int
}

// Error says what happened and what to do.
func (e *SchemaError) Error() string {
	return fmt.Sprintf("database schema version %d is newer than this chartctl supports (%d); upgrade chartctl", e.Database, e.Supported)
}

// migrationFills are the Go parts of migrations: data a migration's new
// columns need that SQL cannot compute, filled in the migration's own
// transaction after its SQL.
var migrationFills = map[int]func(ctx context.Context, tx pgx.Tx) error{
	2: fillCanonicalVersions,
}

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations, by version; versions run
// 1, 2, 3… without gaps.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migration %s: name it NNNN_what.sql", e.Name())
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", m.name, i+1)
		}
	}
	return out, nil
}

// LatestSchemaVersion is the schema version this binary migrates to.
func LatestSchemaVersion() int {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// migrate brings the schema up to date. It holds the advisory lock on one
// dedicated connection for the whole run (a session lock is tied to its
// connection, so it must not come from a pool that may hand each statement
// another one), and applies each missing migration in its own transaction
// together with its schema_version row, so a crash leaves the schema at a
// whole version.
func migrate(ctx context.Context, pool *pgxpool.Pool) (err error) {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("migrate database: %w", err)
	}
	latest := ms[len(ms)-1].version
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate database: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return fmt.Errorf("migrate database: take the migration lock: %w", err)
	}
	defer func() {
		// Unlock on a fresh context: ctx may be what ended the run. A
		// connection that cannot unlock is closed, which releases the lock.
		if _, uerr := conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, migrationLock); uerr != nil {
			_ = conn.Conn().Close(context.Background())
		}
	}()
	// Create the version table only when missing, so that a user without
	// CREATE rights can run on a schema its owner migrated.
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('schema_version') IS NOT NULL`).Scan(&exists); err != nil {
		return fmt.Errorf("migrate database: %w", err)
	}
	if !exists {
		if _, err := conn.Exec(ctx, `CREATE TABLE schema_version (
			version    integer PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return fmt.Errorf("migrate database: create schema_version: %w", err)
		}
	}
	var current int
	if err := conn.QueryRow(ctx, `SELECT COALESCE(max(version), 0) FROM schema_version`).Scan(&current); err != nil {
		return fmt.Errorf("migrate database: read schema version: %w", err)
	}
	if current > latest {
		return &SchemaError{Database: current, Supported: latest}
	}
	for _, m := range ms[current:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			// No arguments: the simple protocol, which runs a script of
			// several statements.
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			if fill := migrationFills[m.version]; fill != nil {
				if err := fill(ctx, tx); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_version (version) VALUES ($1)`, m.version)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate database to schema version %d (%s): %w", m.version, m.name, err)
		}
	}
	return nil
}
