package postgres

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/Masterminds/semver/v3"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oklog/ulid/v2"
)

// conn is what a DB runs its statements on: the connection pool, or one
// transaction (txConn).
type conn interface {
	querier
	BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
	Ping(ctx context.Context) error
	Reset()
	Close()
	Config() *pgxpool.Config
}

// Ensure the pool is a conn.
var _ conn = (*pgxpool.Pool)(nil)

// txConn runs every statement in one transaction. What a method runs as
// a transaction of its own becomes a savepoint of it, so the method keeps
// its all-or-nothing behaviour (and its retries) inside the larger whole.
type txConn struct {
	pgx.Tx
	pool *pgxpool.Pool
}

// BeginTx starts a savepoint; PostgreSQL keeps the outer transaction's
// isolation level, so opts are not applied.
func (c txConn) BeginTx(ctx context.Context, _ pgx.TxOptions) (pgx.Tx, error) { return c.Begin(ctx) }

// Ping checks the transaction's connection.
func (c txConn) Ping(ctx context.Context) error { return c.Conn().Ping(ctx) }

// Reset leaves the pool alone: the import's own connection is in use.
func (c txConn) Reset() {}

// Close does nothing: the transaction ends when Import returns.
func (c txConn) Close() {}

// Config returns the pool's configuration.
func (c txConn) Config() *pgxpool.Config { return c.pool.Config() }

// Import runs fn with a DB whose every statement runs in one READ
// COMMITTED transaction, committed when fn returns nil and rolled back
// when it fails (or panics), so that a whole dump is loaded or nothing is
// (internal/dump, `chartctl admin restore` and `admin migrate`). Each
// method of that DB runs as a savepoint, with the checks and derived data
// (usage, blob references, generations) it keeps as always; index
// notifications are delivered at the commit. The DB is for fn's goroutine
// only, is valid only until fn returns, and stops at the first error: a
// failed statement aborts the transaction.
func (db *DB) Import(ctx context.Context, fn func(tx *DB) error) error {
	pool, ok := db.pool.(*pgxpool.Pool)
	if !ok {
		return fmt.Errorf("import: already inside an import")
	}
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return db.wrap("begin import", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	in := &DB{
		pool:      txConn{Tx: tx, pool: pool},
		Now:       db.Now,
		entropy:   ulid.Monotonic(rand.Reader, 0),
		nameGrace: db.nameGrace,
		origin:    db.origin,
		versions:  map[string]*semver.Version{},
		keyCache:  map[string]*repoKeys{},
	}
	if err := fn(in); err != nil {
		return err
	}
	err = tx.Commit(ctx)
	db.wrote(ctx)
	return db.wrap("commit import", err)
}
