package tlsconfig

import (
	"context"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/acme/autocert"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/secrets"
)

// CacheStore keeps ACME cache entries where every replica of a scaled-out
// server reads them (internal/postgres implements it). Get returns nil and
// no error for a missing entry.
type CacheStore interface {
	ACMECacheGet(ctx context.Context, key string) ([]byte, error)
	ACMECachePut(ctx context.Context, key string, data []byte) error
	ACMECacheDelete(ctx context.Context, key string) error
	chartctl.LeaseStore
}

// SharedCache is the ACME cache of replicas (CONTRACT §14: "in the
// database with PostgreSQL so replicas share certificates"). Entries hold
// private keys, so they are sealed with the --secrets-key-file key every
// replica shares. HTTP-01 tokens go through it too, so any replica answers
// the challenge of an order another replica placed. A certificate is
// ordered by one replica at a time: the first to miss it takes a lease and
// orders; the others wait for it to appear in the cache.
type SharedCache struct {
	// Store keeps the entries and the leases.
	Store CacheStore
	// Box seals and opens entries.
	Box *secrets.Box
	// Holder names this replica in leases.
	Holder string
	// Wait is how long a replica waits for another's order before it
	// orders itself (the other may have died); 0 means 3 minutes.
	Wait time.Duration
	// Poll is how often a waiting replica looks for the certificate; 0
	// means 500ms.
	Poll time.Duration
}

// orderLease is how long an order's lease lasts: longer than an ACME
// order takes, short enough that a replica dying mid-order does not hold
// the others back for long.
const orderLease = 5 * time.Minute

// Get returns the entry key. On a missing certificate it takes the
// order's lease, or waits for the replica that holds it.
func (c *SharedCache) Get(ctx context.Context, key string) ([]byte, error) {
	data, err := c.get(ctx, key)
	if err != nil || data != nil {
		return data, err
	}
	if !isCertificate(key) {
		return nil, autocert.ErrCacheMiss
	}
	data, ok, err := c.takeOrder(ctx, key)
	if err != nil || data != nil {
		return data, err
	}
	if ok {
		// This replica orders; Put releases the lease.
		return nil, autocert.ErrCacheMiss
	}
	wait, poll := c.Wait, c.Poll
	if wait <= 0 {
		wait = 3 * time.Minute
	}
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			return nil, autocert.ErrCacheMiss
		case <-tick.C:
		}
		data, err := c.get(ctx, key)
		if err != nil || data != nil {
			return data, err
		}
		if data, ok, err := c.takeOrder(ctx, key); err == nil && data != nil {
			return data, nil
		} else if err == nil && ok {
			// The other replica gave up (released or lapsed): order here.
			return nil, autocert.ErrCacheMiss
		}
	}
}

// takeOrder takes the lease of the order for certificate key. Holding it,
// it reads the entry again: the replica that held the lease may have
// stored the certificate and released the lease since this one missed it,
// and then the entry is returned (the lease released) instead of a second
// order. ok reports that the lease is this replica's and the entry still
// missing: this replica orders.
func (c *SharedCache) takeOrder(ctx context.Context, key string) (data []byte, ok bool, err error) {
	ok, err = c.Store.AcquireLease(ctx, leaseName(key), c.Holder, orderLease)
	if err != nil || !ok {
		return nil, false, err
	}
	data, err = c.get(ctx, key)
	if err != nil || data != nil {
		_ = c.Store.ReleaseLease(ctx, leaseName(key), c.Holder)
		return data, false, err
	}
	return nil, true, nil
}

// get reads and opens one entry; nil and no error when there is none.
func (c *SharedCache) get(ctx context.Context, key string) ([]byte, error) {
	sealed, err := c.Store.ACMECacheGet(ctx, key)
	if err != nil || sealed == nil {
		return nil, err
	}
	data, err := c.Box.Open(sealed)
	if err != nil {
		return nil, fmt.Errorf("open the ACME cache entry %q (is --secrets-key-file the same on every replica?): %w", key, err)
	}
	return data, nil
}

// Put seals and stores the entry key; storing a certificate ends this
// replica's order lease.
func (c *SharedCache) Put(ctx context.Context, key string, data []byte) error {
	sealed, err := c.Box.Seal(data)
	if err != nil {
		return err
	}
	if err := c.Store.ACMECachePut(ctx, key, sealed); err != nil {
		return err
	}
	if isCertificate(key) {
		return c.Store.ReleaseLease(ctx, leaseName(key), c.Holder)
	}
	return nil
}

// Delete removes the entry key.
func (c *SharedCache) Delete(ctx context.Context, key string) error {
	return c.Store.ACMECacheDelete(ctx, key)
}

// isCertificate tells autocert's certificate entries ("name", "name+rsa")
// from its account key ("acme_account+key", or the legacy
// "acme_account.key" it also looks for) and HTTP-01 tokens.
func isCertificate(key string) bool {
	return !strings.HasPrefix(key, "acme_account") && !strings.HasSuffix(key, "+http-01") && !strings.HasSuffix(key, "+token")
}

// leaseName is the lease of the order for the certificate entry key.
func leaseName(key string) string { return "acme-order:" + key }
