package bolt

import (
	"context"
	"time"
)

// lease is one held lease.
type lease struct {
	holder  string
	expires time.Time
}

// AcquireLease takes or renews the lease name for holder. A bolt file is
// open in one process only (bbolt locks it), so the leases live in that
// process's memory: they coordinate the goroutines of the one server.
func (db *DB) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	now := db.Now()
	db.leaseMu.Lock()
	defer db.leaseMu.Unlock()
	if db.leases == nil {
		db.leases = map[string]lease{}
	}
	if l, ok := db.leases[name]; ok && l.holder != holder && now.Before(l.expires) {
		return false, nil
	}
	db.leases[name] = lease{holder: holder, expires: now.Add(ttl)}
	return true, nil
}

// ReleaseLease ends holder's lease on name.
func (db *DB) ReleaseLease(ctx context.Context, name, holder string) error {
	db.leaseMu.Lock()
	defer db.leaseMu.Unlock()
	if l, ok := db.leases[name]; ok && l.holder == holder {
		delete(db.leases, name)
	}
	return nil
}
