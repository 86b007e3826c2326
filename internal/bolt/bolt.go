// Package bolt implements chartctl.Store on a single bbolt database file.
//
// Every method runs in one bbolt transaction (one View or Update closure),
// so each is atomic. Records are JSON (see encode.go); secondary indexes
// live in their own buckets and are kept in the same transaction as the
// records they index (see buckets.go).
package bolt

import (
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/oklog/ulid/v2"
	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Ensure DB implements chartctl.Store.
var _ chartctl.Store = (*DB)(nil)

// ErrLocked is returned (wrapped) by Open when another process holds the
// database file open; test for it with errors.Is.
var ErrLocked = errors.New("database is in use by another process")

// DefaultLockTimeout is how long Open waits for the file lock by default.
const DefaultLockTimeout = time.Second

// DefaultNameGrace is how long the name of a deleted repository stays
// reserved for its owner by default (see NameGrace).
const DefaultNameGrace = 24 * time.Hour

// ID prefixes, one per record type, so an ID says what it names.
const (
	prefixUser   = "usr_"
	prefixAPIKey = "key_"
	prefixOrg    = "org_"
	prefixRepo   = "repo_"
	prefixTeam   = "team_"
	prefixMember = "mem_"
)

// DB is a chartctl.Store backed by a bbolt file. It is safe for concurrent
// use.
type DB struct {
	db *file
	// trim keeps the file's pages from staying mapped (trim.go).
	trim *trimmer

	// Now returns the current time; it stamps CreatedAt and AddedAt. Tests
	// replace it before first use.
	Now func() time.Time

	idMu    sync.Mutex
	entropy *ulid.MonotonicEntropy

	// leases are the held leases (lease.go).
	leaseMu sync.Mutex
	leases  map[string]lease
	// deliveryClaims are the webhook deliveries a dispatcher claimed, by
	// delivery ID, with the end of each claim's lease (ClaimDeliveries).
	deliveryClaimMu sync.Mutex
	deliveryClaims  map[string]time.Time

	// claims are the blob claims (blobclaim.go).
	claims blobClaims

	// keyCache keeps repositories' version keys in order (sortedKeys).
	keyMu    sync.Mutex
	keyCache map[string]*sortedRepoKeys

	// versions caches parsed SemVer versions by string: parsing is the
	// dominant cost of ordering a repository's versions.
	versionsMu sync.RWMutex
	versions   map[string]*semver.Version

	// upgradedFrom is the schema version Open found, when it upgraded it.
	upgradedFrom int

	// puts counts PutChartVersion calls in flight: a lone upload need not
	// wait for a batch to fill.
	puts atomic.Int32

	// nameGrace is how long a deleted repository's name is refused to
	// other owners; 0 turns the reservation off.
	nameGrace time.Duration

	// memos keep the answers of the reads of every registry GET
	// (commitmemo.go).
	memos *commitMemos
}

type options struct {
	lockTimeout time.Duration
	batchDelay  time.Duration
	nameGrace   time.Duration
}

// Option configures Open.
type Option func(*options)

// LockTimeout sets how long Open waits for another process to release the
// database file before failing with ErrLocked (default DefaultLockTimeout).
func LockTimeout(d time.Duration) Option {
	return func(o *options) { o.lockTimeout = d }
}

// BatchDelay sets how long a chart upload waits for concurrent uploads to
// share its commit (bbolt's MaxBatchDelay; default bbolt's 10ms). Every
// upload is still fsynced before it is acknowledged.
func BatchDelay(d time.Duration) Option {
	return func(o *options) { o.batchDelay = d }
}

// NameGrace sets how long the name of a deleted repository stays reserved
// for its owner (default DefaultNameGrace): during that time only the same
// owner (the same organization, or for a personal repository the same
// user) may create a repository of that name, so Helm clients still
// configured with the old URL never pull another owner's charts from it.
// Zero or negative turns the reservation off.
func NameGrace(d time.Duration) Option {
	return func(o *options) { o.nameGrace = max(d, 0) }
}

// Open opens (creating if needed) the database file at path, creates any
// missing bucket and upgrades an older schema in place (see
// SchemaVersion). A database written by a newer chartctl is refused with
// an error wrapping ErrNewerSchema. If another process has the file open, it fails after the
// lock timeout with an error wrapping ErrLocked.
func Open(path string, opts ...Option) (*DB, error) {
	o := options{lockTimeout: DefaultLockTimeout, nameGrace: DefaultNameGrace}
	for _, opt := range opts {
		opt(&o)
	}
	bdb, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: o.lockTimeout})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("open store %s: %w", path, ErrLocked)
	} else if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if o.batchDelay > 0 {
		bdb.MaxBatchDelay = o.batchDelay
	}
	from, err := migrate(bdb)
	if err != nil {
		_ = bdb.Close()
		var se *schemaError
		if errors.As(err, &se) {
			return nil, err
		}
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return &DB{
		db:           &file{DB: bdb},
		trim:         startTrimmer(bdb),
		upgradedFrom: int(from),
		Now:          time.Now,
		entropy:      ulid.Monotonic(rand.Reader, 0),
		versions:     map[string]*semver.Version{},
		nameGrace:    o.nameGrace,
		memos:        newCommitMemos(),
	}, nil
}

// Close closes the database file. Pending transactions finish first.
func (db *DB) Close() error {
	db.trim.close()
	if err := db.db.Close(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// Path returns the database file's path.
func (db *DB) Path() string { return db.db.Path() }

// now returns the clock's time in UTC, without a monotonic reading.
func (db *DB) now() time.Time { return db.Now().UTC().Round(0) }

// newID returns prefix followed by a new ULID: unique, and ordered by
// creation time within this process.
func (db *DB) newID(prefix string) (string, error) {
	db.idMu.Lock()
	defer db.idMu.Unlock()
	id, err := ulid.New(ulid.Timestamp(db.Now()), db.entropy)
	if err != nil {
		return "", fmt.Errorf("new id: %w", err)
	}
	return prefix + id.String(), nil
}

// wrap returns err unchanged when it is a *chartctl.Error (a message meant
// for a person) or nil, and otherwise wraps it with what was being done. A
// closed database (a request outliving a shutdown) is EUNAVAILABLE, which
// the contract answers with 503.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *chartctl.Error
	if errors.As(err, &e) {
		return err
	}
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return chartctl.Errorf(chartctl.EUNAVAILABLE, "The server is shutting down; retry in a moment.")
	}
	return fmt.Errorf("%s: %w", op, err)
}
