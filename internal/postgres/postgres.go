// Package postgres implements chartctl.Store and chartctl.OAuthStore on
// PostgreSQL with a pgx connection pool, so that any number of chartctl
// replicas share one database.
//
// Every method is one statement or one transaction (where bolt uses one
// Update closure), run at READ COMMITTED with row locks (SELECT … FOR
// UPDATE) and unique constraints deciding races: of concurrent creates of
// one name exactly one wins, of concurrent uploads of one version exactly
// one creates it. Transactions that lose a deadlock or serialization check,
// or that never reached a server, are retried a few times.
//
// The schema is created and upgraded by embedded migrations (see
// migrate.go) that Open applies under a PostgreSQL advisory lock.
//
// Behaviour matches internal/bolt method for method (internal/storetest
// proves it); the one visible difference is that times are kept to the
// microsecond, PostgreSQL's precision.
package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/Masterminds/semver/v3"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/puddle/v2"
	"github.com/oklog/ulid/v2"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Ensure DB implements the stores.
var (
	_ chartctl.Store      = (*DB)(nil)
	_ chartctl.OAuthStore = (*DB)(nil)
	_ chartctl.OCIStore   = (*DB)(nil)
)

// ID prefixes, one per record type, as bolt uses.
const (
	prefixUser       = "usr_"
	prefixAPIKey     = "key_"
	prefixOrg        = "org_"
	prefixRepo       = "repo_"
	prefixTeam       = "team_"
	prefixMember     = "mem_"
	prefixOAuthToken = "tok_"
)

// maxAttempts bounds how often a transaction is retried after a deadlock,
// a serialization failure or a connection that died before the statement
// was sent.
const maxAttempts = 5

// defaultMaxConns is the pool size unless the URL sets pool_max_conns:
// three replicas stay well within PostgreSQL's default 100 connections.
const defaultMaxConns = 16

// defaultConnectTimeout bounds each connection attempt unless the URL
// sets connect_timeout.
const defaultConnectTimeout = 5 * time.Second

// DefaultNameGrace is how long the name of a deleted repository stays
// reserved for its owner by default (see NameGrace), as in bolt.
const DefaultNameGrace = 24 * time.Hour

// Option configures Open.
type Option func(*options)

type options struct {
	nameGrace time.Duration
}

// NameGrace sets how long the name of a deleted repository stays reserved
// for its owner (default DefaultNameGrace): during that time only the same
// organization, or for a personal repository the same user, may create a
// repository of that name. 0 disables the reservation.
func NameGrace(d time.Duration) Option {
	return func(o *options) { o.nameGrace = max(d, 0) }
}

// DB is a chartctl.Store on a PostgreSQL database. It is safe for
// concurrent use, also by many processes on the same database.
type DB struct {
	// pool runs the statements: the connection pool, or for a DB that
	// Import hands out, one transaction (import.go).
	pool conn

	// Now returns the current time; it stamps CreatedAt and AddedAt. Tests
	// replace it before first use.
	Now func() time.Time

	idMu    sync.Mutex
	entropy *ulid.MonotonicEntropy

	// nameGrace is how long a deleted repository's name is refused to
	// other owners.
	nameGrace time.Duration

	// origin tells this process's index notifications from other
	// replicas' (watch.go).
	origin string

	// versions caches parsed SemVer versions by string (nil when a
	// version does not parse), as bolt does.
	versionsMu sync.RWMutex
	versions   map[string]*semver.Version

	// keyCache holds repositories' sorted version keys by repository ID,
	// valid for one generation (charts.go).
	keysMu   sync.Mutex
	keyCache map[string]*repoKeys

	// memos keep the registry's hottest reads while the write epoch is
	// the same (memo.go).
	memos *ociMemos
	// epoch is the write epoch of the memos; watchers counts the
	// WatchIndex loops running, which keep it moving with other
	// replicas' writes (memo.go).
	epoch    atomic.Uint64
	watchers atomic.Int32
	// alone is set while WatchIndex finds no other replica listening
	// on the database: only then are the memos used (memo.go); aloneGen
	// moves each time it becomes set (throttlememo.go).
	alone    atomic.Bool
	aloneGen atomic.Uint64
	// throttles keeps the failed-authentication windows while alone.
	throttles throttleMemo
	// shared is the write epoch the replicas share, for the memos with
	// other replicas (sharedepoch.go).
	shared sharedEpoch
}

// Open connects to the database at dsn (a postgres:// URL or a libpq
// keyword/value string), applies the schema migrations this binary knows
// under an advisory lock, and returns the store. It fails with a
// *SchemaError when the database was migrated by a newer chartctl.
func Open(ctx context.Context, dsn string, opts ...Option) (*DB, error) {
	o := options{nameGrace: DefaultNameGrace}
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message masks the password.
		return nil, fmt.Errorf("invalid --database URL: %w", err)
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		// pgx's default (the number of CPUs, at least 4) starves a replica
		// serving many concurrent uploads on a small machine.
		cfg.MaxConns = defaultMaxConns
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		// Without connect_timeout in the URL, a database host that drops
		// packets would hold each request for the operating system's TCP
		// timeout; fail in seconds instead, as 503.
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	where := cfg.ConnConfig.Host
	if cfg.ConnConfig.Port != 0 {
		where = net.JoinHostPort(where, fmt.Sprint(cfg.ConnConfig.Port))
	}
	where += "/" + cfg.ConnConfig.Database
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to database %s: %w", where, err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	if err := assignIndexTokens(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return &DB{
		pool:      pool,
		Now:       time.Now,
		entropy:   ulid.Monotonic(rand.Reader, 0),
		nameGrace: o.nameGrace,
		origin:    ulid.Make().String(),
		versions:  map[string]*semver.Version{},
		keyCache:  map[string]*repoKeys{},
		memos:     newOCIMemos(),
	}, nil
}

// Close closes every connection of the pool; statements in flight finish
// first.
func (db *DB) Close() error {
	db.pool.Close()
	return nil
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	return db.wrap("ping database", db.pool.Ping(ctx))
}

// SchemaVersion returns the version of the database's schema.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.pool.QueryRow(ctx, `SELECT COALESCE(max(version), 0) FROM schema_version`).Scan(&v)
	return v, db.wrap("read schema version", err)
}

// now returns the clock's time in UTC to the microsecond, the precision
// PostgreSQL keeps, so a record handed back equals the one stored.
func (db *DB) now() time.Time { return db.Now().UTC().Truncate(time.Microsecond) }

// newID returns prefix followed by a new ULID.
func (db *DB) newID(prefix string) (string, error) {
	db.idMu.Lock()
	defer db.idMu.Unlock()
	id, err := ulid.New(ulid.Timestamp(db.Now()), db.entropy)
	if err != nil {
		return "", fmt.Errorf("new id: %w", err)
	}
	return prefix + id.String(), nil
}

// fill sets *id to a new ID with prefix and *at to now when they are empty.
func (db *DB) fill(id *string, idPrefix string, at *time.Time) error {
	if *id == "" {
		v, err := db.newID(idPrefix)
		if err != nil {
			return err
		}
		*id = v
	}
	if at.IsZero() {
		*at = db.now()
	}
	return nil
}

// querier is what both the pool and a transaction offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// tx runs fn in a READ COMMITTED transaction, committing when it returns
// nil, and retries it when PostgreSQL broke a deadlock or the connection
// died before anything was sent. fn may so run more than once and must
// set its results afresh each time. Errors come back through wrap.
func (db *DB) tx(ctx context.Context, op string, fn func(tx pgx.Tx) error) error {
	return db.txOpts(ctx, op, pgx.TxOptions{}, fn)
}

// readTx runs fn in a read-only REPEATABLE READ transaction: several
// statements that see one snapshot.
func (db *DB) readTx(ctx context.Context, op string, fn func(tx pgx.Tx) error) error {
	return db.txOpts(ctx, op, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

func (db *DB) txOpts(ctx context.Context, op string, opts pgx.TxOptions, fn func(tx pgx.Tx) error) error {
	var err error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		err = pgx.BeginTxFunc(ctx, db.pool, opts, fn)
		if !retryable(err) || ctx.Err() != nil {
			break
		}
	}
	if opts.AccessMode != pgx.ReadOnly {
		// Committed, or failed at any point, perhaps the commit itself:
		// a memo's answer from before may be stale either way.
		db.wrote(ctx)
	}
	return db.wrap(op, err)
}

// retryable reports whether a failed transaction may simply run again.
func retryable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, errRetry) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// serialization_failure, deadlock_detected
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	return pgconn.SafeToRetry(err)
}

// wrap returns err unchanged when it is a *chartctl.Error or nil. A
// database that cannot be reached is EUNAVAILABLE (503), a closed pool
// (a request outliving shutdown) too; anything else is wrapped with what
// was being done, for the log, and answered as an internal error, so no
// SQL text ever reaches a client.
func (db *DB) wrap(op string, err error) error {
	var e *chartctl.Error
	if err == nil || errors.As(err, &e) {
		return err
	}
	if c, _ := constraint(err); c == "22021" {
		// A NUL or invalid UTF-8 in a value PostgreSQL's text cannot hold
		// (lookups check their keys first and find nothing).
		return chartctl.Errorf(chartctl.EINVALID, "A value contains a character that cannot be stored (NUL or invalid UTF-8).")
	}
	if errors.Is(err, puddle.ErrClosedPool) {
		return fmt.Errorf("%s: %v: %w", op, err, chartctl.Errorf(chartctl.EUNAVAILABLE, "The server is shutting down; retry in a moment."))
	}
	if unavailable(err) {
		// The server went away (a restart, a failover): every pooled
		// connection is likely dead too. Drop them all now, so the next
		// requests dial afresh instead of each finding a dead one. (A
		// deadline that ran out says nothing of the other connections.)
		if !errors.Is(err, context.DeadlineExceeded) {
			db.pool.Reset()
		}
		return fmt.Errorf("%s: %v: %w", op, err, chartctl.Errorf(chartctl.EUNAVAILABLE, "The database is unavailable; retry in a moment."))
	}
	return fmt.Errorf("%s: %w", op, err)
}

// unavailable reports whether err says the database cannot be reached or
// went away, as opposed to refusing a statement.
func unavailable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08: connection exception; 57P01..57P03: the server is
		// shutting down, crashed or starting; 53300: too many connections.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || pe.Code == "53300"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, context.DeadlineExceeded) || pgconn.SafeToRetry(err)
}

// constraint returns the SQLSTATE and constraint name of a PostgreSQL
// error, "" when err is not one.
func constraint(err error) (code, name string) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code, pe.ConstraintName
	}
	return "", ""
}

// isUnique reports whether err is a unique violation of constraint name.
func isUnique(err error, name string) bool {
	c, n := constraint(err)
	return c == "23505" && n == name
}

// isForeignKey reports whether err is a foreign key violation of
// constraint name.
func isForeignKey(err error, name string) bool {
	c, n := constraint(err)
	return c == "23503" && n == name
}

// storable reports whether every s can be a PostgreSQL text value: valid
// UTF-8 without NUL. A key that is not storable names no record, so
// lookups answer "not found" without asking the database.
func storable(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			return false
		}
	}
	return true
}

// text returns free text as bolt stores it (JSON): invalid UTF-8 bytes
// replaced by U+FFFD.
func text(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// texts is text for every element.
func texts(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = text(s)
	}
	return out
}

// lowerEmail is the key form of an email address.
func lowerEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// utc returns t in UTC, as every record reports its times.
func utc(t time.Time) time.Time { return t.UTC() }

// utcPtr is utc for optional times.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.UTC()
	return &v
}

// scopesOf converts stored scope names.
func scopesOf(names []string) chartctl.Scopes {
	out := make(chartctl.Scopes, len(names))
	for i, s := range names {
		out[i] = chartctl.Scope(s)
	}
	return out
}

// nonNil returns s, or an empty slice for nil: a NOT NULL array column.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// nilIfEmpty returns nil for an empty slice, as bolt's records decode.
func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}
