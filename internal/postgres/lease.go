package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// AcquireLease takes or renews the lease name for holder until ttl from the
// database's now, in one statement: the row is written only when it is
// new, lapsed or already holder's.
func (db *DB) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	var got string
	err := db.pool.QueryRow(ctx, `INSERT INTO leases (name, holder, expires_at)
		VALUES ($1, $2, now() + make_interval(secs => $3))
		ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
		WHERE leases.expires_at <= now() OR leases.holder = EXCLUDED.holder
		RETURNING holder`, name, holder, ttl.Seconds()).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, db.wrap("acquire lease", err)
	}
	return true, nil
}

// ReleaseLease ends holder's lease on name.
func (db *DB) ReleaseLease(ctx context.Context, name, holder string) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM leases WHERE name = $1 AND holder = $2`, name, holder)
	return db.wrap("release lease", err)
}

// ACMECacheGet returns the sealed ACME cache entry key, or nil and no error
// when there is none.
func (db *DB) ACMECacheGet(ctx context.Context, key string) ([]byte, error) {
	var data []byte
	err := db.pool.QueryRow(ctx, `SELECT data FROM acme_cache WHERE key = $1`, key).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return data, db.wrap("read the ACME cache", err)
}

// ACMECachePut stores the sealed ACME cache entry key.
func (db *DB) ACMECachePut(ctx context.Context, key string, data []byte) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO acme_cache (key, data) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data, updated_at = now()`, key, data)
	return db.wrap("write the ACME cache", err)
}

// ACMECacheDelete removes the ACME cache entry key, if any.
func (db *DB) ACMECacheDelete(ctx context.Context, key string) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM acme_cache WHERE key = $1`, key)
	return db.wrap("delete from the ACME cache", err)
}
