package bolt

import (
	"context"
	"sort"
	"strings"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// CreateUser stores u, filling ID and CreatedAt when empty. It returns
// EINVALID if the email is empty and ECONFLICT if it is taken (emails are
// compared case-insensitively).
func (db *DB) CreateUser(ctx context.Context, u *chartctl.User) error {
	email := lowerEmail(u.Email)
	if email == "" || strings.Contains(email, sep) {
		return chartctl.Invalid("email", "A valid email is required.")
	}
	if err := checkIdentity(u.Identity); err != nil {
		return err
	}
	if err := db.fill(&u.ID, prefixUser, &u.CreatedAt); err != nil {
		return err
	}
	return wrap("create user", db.update(ctx, func(tx *bbolt.Tx) error {
		emails := bucket(tx, userEmailsBucket)
		if emails.Get([]byte(email)) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "A user with email %q already exists.", u.Email)
		}
		users := bucket(tx, usersBucket)
		if users.Get([]byte(u.ID)) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "A user with ID %q already exists.", u.ID)
		}
		v, err := encode(newUserRecord(u))
		if err != nil {
			return err
		}
		if err := users.Put([]byte(u.ID), v); err != nil {
			return err
		}
		if err := bindIdentity(tx, u.ID, u.Identity); err != nil {
			return err
		}
		return emails.Put([]byte(email), []byte(u.ID))
	}))
}

// UserByIdentity returns the user bound to the identity provider's
// account id. It returns ENOTFOUND if none.
func (db *DB) UserByIdentity(ctx context.Context, id chartctl.Identity) (*chartctl.User, error) {
	var u *chartctl.User
	err := db.db.View(func(tx *bbolt.Tx) error {
		if id.Local() || checkIdentity(id) != nil {
			return userNotFound()
		}
		uid := bucket(tx, userIdentitiesBucket).Get(identityKey(id))
		if uid == nil {
			return userNotFound()
		}
		var err error
		u, err = getUser(tx, string(uid))
		return err
	})
	return u, wrap("get user by identity", err)
}

// checkIdentity refuses an identity the index cannot key: a bound one
// without a subject, or with the key separator in a part.
func checkIdentity(id chartctl.Identity) error {
	if id.Local() {
		return nil
	}
	if id.Subject == "" || strings.Contains(id.Provider+id.Issuer+id.Subject, sep) {
		return chartctl.Invalid("identity", "An identity needs a provider and a subject without NUL characters.")
	}
	return nil
}

func identityKey(id chartctl.Identity) []byte { return key(id.Provider, id.Issuer, id.Subject) }

// bindIdentity indexes userID under id (nothing for a local account). It
// returns ECONFLICT when another user is bound to id.
func bindIdentity(tx *bbolt.Tx, userID string, id chartctl.Identity) error {
	if id.Local() {
		return nil
	}
	b := bucket(tx, userIdentitiesBucket)
	if cur := b.Get(identityKey(id)); cur != nil && string(cur) != userID {
		return chartctl.Errorf(chartctl.ECONFLICT, "Another user is already bound to this %s account.", id.Provider)
	}
	return b.Put(identityKey(id), []byte(userID))
}

// unbindIdentity drops the index entry of id (nothing for a local account).
func unbindIdentity(tx *bbolt.Tx, id chartctl.Identity) error {
	if id.Local() {
		return nil
	}
	return bucket(tx, userIdentitiesBucket).Delete(identityKey(id))
}

// User returns the user with id. It returns ENOTFOUND if none.
func (db *DB) User(ctx context.Context, id string) (*chartctl.User, error) {
	var u *chartctl.User
	err := db.db.View(func(tx *bbolt.Tx) error {
		var err error
		u, err = getUser(tx, id)
		return err
	})
	return u, wrap("get user", err)
}

// UserByEmail returns the user with email, compared case-insensitively. It
// returns ENOTFOUND if none.
func (db *DB) UserByEmail(ctx context.Context, email string) (*chartctl.User, error) {
	var u *chartctl.User
	err := db.db.View(func(tx *bbolt.Tx) error {
		id := bucket(tx, userEmailsBucket).Get([]byte(lowerEmail(email)))
		if id == nil {
			return userNotFound()
		}
		var err error
		u, err = getUser(tx, string(id))
		return err
	})
	return u, wrap("get user by email", err)
}

// UserCount returns the number of users.
func (db *DB) UserCount(ctx context.Context) (int, error) {
	var n int
	err := db.db.View(func(tx *bbolt.Tx) error {
		n = bucket(tx, usersBucket).Stats().KeyN
		return nil
	})
	return n, wrap("count users", err)
}

func getUser(tx *bbolt.Tx, id string) (*chartctl.User, error) {
	v := bucket(tx, usersBucket).Get([]byte(id))
	if v == nil {
		return nil, userNotFound()
	}
	r, err := decode[userRecord](v)
	if err != nil {
		return nil, err
	}
	return r.domain(), nil
}

func userNotFound() error { return chartctl.Errorf(chartctl.ENOTFOUND, "User not found.") }

// CreateAPIKey stores k, filling ID and CreatedAt when empty. It returns
// EINVALID if the hash is empty, ENOTFOUND if the user does not exist and
// ECONFLICT if a key with the same hash exists.
func (db *DB) CreateAPIKey(ctx context.Context, k *chartctl.APIKey) error {
	if len(k.Hash) == 0 {
		return chartctl.Invalid("hash", "An API key hash is required.")
	}
	if err := db.fill(&k.ID, prefixAPIKey, &k.CreatedAt); err != nil {
		return err
	}
	return wrap("create api key", db.update(ctx, func(tx *bbolt.Tx) error {
		if bucket(tx, usersBucket).Get([]byte(k.UserID)) == nil {
			return userNotFound()
		}
		hashes := bucket(tx, apiKeyHashesBucket)
		if hashes.Get(k.Hash) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "An API key with this value already exists.")
		}
		keys := bucket(tx, apiKeysBucket)
		if keys.Get([]byte(k.ID)) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "An API key with ID %q already exists.", k.ID)
		}
		v, err := encode(newAPIKeyRecord(k))
		if err != nil {
			return err
		}
		if err := keys.Put([]byte(k.ID), v); err != nil {
			return err
		}
		if err := hashes.Put(k.Hash, []byte(k.ID)); err != nil {
			return err
		}
		return bucket(tx, userAPIKeysBucket).Put(key(k.UserID, k.ID), nil)
	}))
}

// APIKeyByHash returns the key whose hash is h. It returns ENOTFOUND if
// none.
func (db *DB) APIKeyByHash(ctx context.Context, h []byte) (*chartctl.APIKey, error) {
	var k *chartctl.APIKey
	err := db.db.View(func(tx *bbolt.Tx) error {
		if len(h) == 0 {
			return apiKeyNotFound()
		}
		id := bucket(tx, apiKeyHashesBucket).Get(h)
		if id == nil {
			return apiKeyNotFound()
		}
		r, err := getAPIKey(tx, id)
		if err != nil {
			return err
		}
		k = r.domain()
		return nil
	})
	return k, wrap("get api key", err)
}

// APIKeys returns the user's keys, oldest first (an unknown user has none).
func (db *DB) APIKeys(ctx context.Context, userID string) ([]*chartctl.APIKey, error) {
	var out []*chartctl.APIKey
	err := db.db.View(func(tx *bbolt.Tx) error {
		pfx := prefix(userID)
		return scanPrefix(bucket(tx, userAPIKeysBucket), pfx, func(k, _ []byte) error {
			r, err := getAPIKey(tx, k[len(pfx):])
			if err != nil {
				return err
			}
			out = append(out, r.domain())
			return nil
		})
	})
	if err != nil {
		return nil, wrap("list api keys", err)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// DeleteAPIKey revokes the user's key id. It returns ENOTFOUND if the user
// has no such key.
func (db *DB) DeleteAPIKey(ctx context.Context, userID, id string) error {
	return wrap("delete api key", db.update(ctx, func(tx *bbolt.Tx) error {
		r, err := getAPIKey(tx, []byte(id))
		if err != nil {
			return err
		}
		if r.UserID != userID {
			return apiKeyNotFound()
		}
		if err := bucket(tx, apiKeysBucket).Delete([]byte(id)); err != nil {
			return err
		}
		if err := bucket(tx, apiKeyHashesBucket).Delete(r.Hash); err != nil {
			return err
		}
		return bucket(tx, userAPIKeysBucket).Delete(key(userID, id))
	}))
}

// TouchAPIKeys records last-used times for many keys in one write. Keys
// that no longer exist are skipped, and a recorded time never moves back.
func (db *DB) TouchAPIKeys(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	return wrap("touch api keys", db.db.Update(func(tx *bbolt.Tx) error {
		keys := bucket(tx, apiKeysBucket)
		for id, t := range used {
			v := keys.Get([]byte(id))
			if v == nil {
				continue
			}
			r, err := decode[apiKeyRecord](v)
			if err != nil {
				return err
			}
			t = t.UTC().Round(0)
			if r.LastUsedAt != nil && !t.After(*r.LastUsedAt) {
				continue
			}
			r.LastUsedAt = &t
			if v, err = encode(r); err != nil {
				return err
			}
			if err := keys.Put([]byte(id), v); err != nil {
				return err
			}
		}
		return nil
	}))
}

func getAPIKey(tx *bbolt.Tx, id []byte) (*apiKeyRecord, error) {
	v := bucket(tx, apiKeysBucket).Get(id)
	if v == nil {
		return nil, apiKeyNotFound()
	}
	return decode[apiKeyRecord](v)
}

func apiKeyNotFound() error { return chartctl.Errorf(chartctl.ENOTFOUND, "API key not found.") }

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
