package chartctl

import (
	"context"
	"time"
)

// MinMirrorInterval is the shortest time between two scheduled syncs of a
// mirror (CONTRACT §14).
const MinMirrorInterval = 5 * time.Minute

// MirrorStatus is where a mirror's sync stands.
type MirrorStatus string

// The statuses of §14.
const (
	// MirrorOK: the last sync copied everything the upstream lists.
	MirrorOK MirrorStatus = "ok"
	// MirrorSyncing: a sync is running or has been asked for.
	MirrorSyncing MirrorStatus = "syncing"
	// MirrorError: the last sync failed; Error says why. The mirror keeps
	// serving what it has.
	MirrorError MirrorStatus = "error"
)

// MirrorSettings are what a mirror's owner chooses: the upstream and how
// often to follow it.
type MirrorSettings struct {
	// URL is the upstream Helm repository (its index.yaml is below it).
	URL string
	// Interval is the time between scheduled syncs, at least
	// MinMirrorInterval.
	Interval time.Duration
	// Username and Password are the upstream's basic auth credential,
	// both empty for none. Password is sealed with the server's secrets
	// key (internal/secrets, AES-GCM): stores keep and return it as
	// opaque bytes, and no API shows it.
	Username string
	Password []byte
}

// MirrorState is what the server records about a mirror's syncs.
type MirrorState struct {
	Status MirrorStatus
	// LastSyncAt is when the last sync that copied everything finished,
	// nil if none has.
	LastSyncAt *time.Time
	// LastAttemptAt is when the last sync, successful or not, finished
	// (nil if none has); the next scheduled one is due Interval after it.
	LastAttemptAt *time.Time
	// Error says why the last sync failed; "" unless Status is
	// MirrorError.
	Error string
}

// Mirror makes a repository a read-only copy of an upstream Helm
// repository: nothing but the server's syncs may add to it.
type Mirror struct {
	MirrorSettings
	MirrorState
}

// Due reports whether a sync of m is due at now: one was asked for (or
// was cut short), or Interval has passed since the last attempt.
func (m *Mirror) Due(now time.Time) bool {
	if m.Status == MirrorSyncing || m.LastAttemptAt == nil {
		return true
	}
	return !now.Before(m.LastAttemptAt.Add(m.Interval))
}

// MirrorStore keeps the settings and sync state of mirror repositories
// (Repository.Mirror). A mirror is made by CreateRepository with Mirror
// set, and a repository never becomes or stops being one.
type MirrorStore interface {
	// UpdateMirror replaces the settings of the mirror repository named
	// name and returns the repository; its sync state stays as it is.
	// Like UpdateRepository it writes the Change ctx carries. Returns
	// ENOTFOUND, or EINVALID (parameter "mirror") when the repository is
	// not a mirror.
	UpdateMirror(ctx context.Context, name string, s MirrorSettings) (*Repository, error)
	// SetMirrorState records the sync state of the mirror repository
	// named name, if it is still the one with ID id (a sync never reports
	// on a repository re-created under its name), writing the Change ctx
	// carries, if any. Returns ENOTFOUND when there is no such repository,
	// it has another ID, or it is not a mirror.
	SetMirrorState(ctx context.Context, name, id string, st MirrorState) error
}
