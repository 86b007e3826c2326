package chartctl

import (
	"context"
	"time"
)

// LeaseStore hands out named leases, so that work which must run once at a
// time (a scheduled retention run, a mirror's sync, an ACME order) runs on
// one replica of a scaled-out server while the others stand by. A lease
// has at most one holder at a time across every process sharing the store,
// and lapses on its own after its time to live, so a holder that dies
// without releasing it blocks the others for at most that long.
type LeaseStore interface {
	// AcquireLease takes the lease name for holder until ttl from now, or
	// renews it when holder already has it. It reports false, without an
	// error, while another holder's lease has not lapsed.
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	// ReleaseLease ends holder's lease on name at once. A lease that
	// lapsed or that another holder has is left alone.
	ReleaseLease(ctx context.Context, name, holder string) error
}
