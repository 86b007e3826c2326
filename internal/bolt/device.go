package bolt

import (
	"bytes"
	"context"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// deviceRecord is a device authorization request (RFC 8628). Its bucket
// is created at open and older binaries never read it, so it needs no
// schema version of its own: the records live minutes.
type deviceRecord struct {
	DeviceCodeHash []byte     `json:"device_code_hash"`
	UserCodeHash   []byte     `json:"user_code_hash"`
	ClientID       string     `json:"client_id"`
	Scopes         []string   `json:"scopes"`
	IntervalNanos  int64      `json:"interval"`
	CreatedAt      time.Time  `json:"created_at"`
	ExpiresAt      time.Time  `json:"expires_at"`
	LastPolledAt   *time.Time `json:"last_polled_at,omitempty"`
	Status         string     `json:"status"`
	UserID         string     `json:"user_id,omitempty"`
	GrantID        string     `json:"grant_id,omitempty"`
	RedeemedAt     *time.Time `json:"redeemed_at,omitempty"`
}

func newDeviceRecord(d *chartctl.DeviceAuthorization) *deviceRecord {
	return &deviceRecord{
		DeviceCodeHash: d.DeviceCodeHash, UserCodeHash: d.UserCodeHash, ClientID: d.ClientID,
		Scopes: d.Scopes.Strings(), IntervalNanos: int64(d.Interval), CreatedAt: d.CreatedAt, ExpiresAt: d.ExpiresAt,
		LastPolledAt: d.LastPolledAt, Status: string(d.Status), UserID: d.UserID, GrantID: d.GrantID, RedeemedAt: d.RedeemedAt,
	}
}

func (r *deviceRecord) domain() *chartctl.DeviceAuthorization {
	return &chartctl.DeviceAuthorization{
		DeviceCodeHash: r.DeviceCodeHash, UserCodeHash: r.UserCodeHash, ClientID: r.ClientID,
		Scopes: scopesOf(r.Scopes), Interval: time.Duration(r.IntervalNanos), CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt,
		LastPolledAt: r.LastPolledAt, Status: chartctl.DeviceStatus(r.Status), UserID: r.UserID, GrantID: r.GrantID, RedeemedAt: r.RedeemedAt,
	}
}

func unknownDevice() error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "The code is invalid or expired.")
}

// CreateDeviceAuthorization stores d and indexes it by its user code. A
// user code held by an expired request is taken over.
func (db *DB) CreateDeviceAuthorization(ctx context.Context, d *chartctl.DeviceAuthorization) error {
	if len(d.DeviceCodeHash) == 0 || len(d.UserCodeHash) == 0 {
		return chartctl.Invalid("device_code", "A device authorization needs a device code hash and a user code hash.")
	}
	if d.CreatedAt.IsZero() {
		d.CreatedAt = db.now()
	}
	if d.Status == "" {
		d.Status = chartctl.DevicePending
	}
	return wrap("create device authorization", db.db.Update(func(tx *bbolt.Tx) error {
		codes, users := bucket(tx, deviceCodesBucket), bucket(tx, deviceUserCodesBucket)
		if codes.Get(d.DeviceCodeHash) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "This device code already exists.")
		}
		if old := users.Get(d.UserCodeHash); old != nil {
			if v := codes.Get(old); v != nil {
				r, err := decode[deviceRecord](v)
				if err != nil {
					return err
				}
				if !r.domain().Expired(d.CreatedAt) {
					return chartctl.Errorf(chartctl.ECONFLICT, "This user code is in use.")
				}
			}
		}
		v, err := encode(newDeviceRecord(d))
		if err != nil {
			return err
		}
		if err := codes.Put(d.DeviceCodeHash, v); err != nil {
			return err
		}
		return users.Put(d.UserCodeHash, d.DeviceCodeHash)
	}))
}

// deviceByUserCode reads the live request whose user code hash is h.
func deviceByUserCode(tx *bbolt.Tx, h []byte, now time.Time) (*deviceRecord, error) {
	dh := bucket(tx, deviceUserCodesBucket).Get(h)
	if dh == nil || len(h) == 0 {
		return nil, unknownDevice()
	}
	v := bucket(tx, deviceCodesBucket).Get(dh)
	if v == nil {
		return nil, unknownDevice()
	}
	r, err := decode[deviceRecord](v)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(r.UserCodeHash, h) || r.domain().Expired(now) {
		return nil, unknownDevice()
	}
	return r, nil
}

// DeviceAuthorizationByUserCode returns the live request whose user code
// hash is h.
func (db *DB) DeviceAuthorizationByUserCode(ctx context.Context, h []byte, now time.Time) (*chartctl.DeviceAuthorization, error) {
	var out *chartctl.DeviceAuthorization
	err := db.db.View(func(tx *bbolt.Tx) error {
		r, err := deviceByUserCode(tx, h, now)
		if err != nil {
			return err
		}
		out = r.domain()
		return nil
	})
	return out, wrap("read device authorization", err)
}

// DecideDeviceAuthorization records the answer decide gives, in one
// Update transaction, so of two answers only the first counts.
func (db *DB) DecideDeviceAuthorization(ctx context.Context, h []byte, now time.Time, decide func(*chartctl.DeviceAuthorization) error) error {
	return wrap("decide device authorization", db.db.Update(func(tx *bbolt.Tx) error {
		r, err := deviceByUserCode(tx, h, now)
		if err != nil {
			return err
		}
		if r.Status != string(chartctl.DevicePending) {
			return chartctl.Errorf(chartctl.ECONFLICT, "This code was already answered.")
		}
		d := r.domain()
		if err := decide(d); err != nil {
			return err
		}
		v, err := encode(newDeviceRecord(d))
		if err != nil {
			return err
		}
		return bucket(tx, deviceCodesBucket).Put(d.DeviceCodeHash, v)
	}))
}

// PollDeviceAuthorization records a poll and, when poll issues tokens,
// redeems the request, in one Update transaction: of concurrent polls of
// an approved request exactly one gets the tokens.
func (db *DB) PollDeviceAuthorization(ctx context.Context, h []byte, now time.Time, poll func(*chartctl.DeviceAuthorization) ([]*chartctl.OAuthToken, error)) error {
	var refused error
	err := db.db.Update(func(tx *bbolt.Tx) error {
		refused = nil
		codes := bucket(tx, deviceCodesBucket)
		v := codes.Get(h)
		if v == nil || len(h) == 0 {
			return unknownDevice()
		}
		r, err := decode[deviceRecord](v)
		if err != nil {
			return err
		}
		if r.RedeemedAt != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "This device code was already used.")
		}
		d := r.domain()
		tokens, pollErr := poll(d)
		at := now.UTC().Round(0)
		d.LastPolledAt = &at
		if pollErr == nil {
			d.RedeemedAt = &at
		}
		if v, err = encode(newDeviceRecord(d)); err != nil {
			return err
		}
		if err := codes.Put(h, v); err != nil {
			return err
		}
		if pollErr != nil {
			// The poll's time and interval are kept (slow_down counts
			// from them); the refusal is returned after the commit.
			refused = pollErr
			return nil
		}
		if err := putGrant(tx, d.GrantID, at); err != nil {
			return err
		}
		if err := db.putTokens(tx, tokens); err != nil {
			return err
		}
		return revokeExcessGrants(tx, d.UserID, d.ClientID, d.GrantID, now)
	})
	if err != nil {
		return wrap("poll device authorization", err)
	}
	return refused
}

// deleteExpiredDevices removes the requests expired before now and their
// user code index entries.
func deleteExpiredDevices(tx *bbolt.Tx, now time.Time) (int, error) {
	codes, users := bucket(tx, deviceCodesBucket), bucket(tx, deviceUserCodesBucket)
	var dead []*deviceRecord
	err := codes.ForEach(func(_, v []byte) error {
		r, err := decode[deviceRecord](v)
		if err != nil {
			return err
		}
		if r.ExpiresAt.Before(now) {
			dead = append(dead, r)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, r := range dead {
		if err := codes.Delete(r.DeviceCodeHash); err != nil {
			return 0, err
		}
		// The index entry may already name a newer request with the same
		// user code; that one stays.
		if bytes.Equal(users.Get(r.UserCodeHash), r.DeviceCodeHash) {
			if err := users.Delete(r.UserCodeHash); err != nil {
				return 0, err
			}
		}
	}
	return len(dead), nil
}
