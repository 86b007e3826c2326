package bolt

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Users returns every user, by email.
func (db *DB) Users(ctx context.Context) ([]*chartctl.User, error) {
	var out []*chartctl.User
	err := db.db.View(func(tx *bbolt.Tx) error {
		return bucket(tx, userEmailsBucket).ForEach(func(_, id []byte) error {
			u, err := getUser(tx, string(id))
			if err != nil {
				return err
			}
			out = append(out, u)
			return nil
		})
	})
	return out, wrap("list users", err)
}

// UpdateUser applies upd to the user with id. Disabling ends every
// credential of the user in the same transaction. It returns ENOTFOUND,
// and ECONFLICT when the change would leave no enabled admin.
func (db *DB) UpdateUser(ctx context.Context, id string, upd chartctl.UserUpdate) (*chartctl.User, error) {
	var out *chartctl.User
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		r, err := getUserRecord(tx, id)
		if err != nil {
			return err
		}
		wasEnabledAdmin := r.Admin && !r.Disabled
		disabling := upd.Disabled != nil && *upd.Disabled && !r.Disabled
		if upd.Disabled != nil {
			r.Disabled = *upd.Disabled
		}
		if upd.Admin != nil {
			r.Admin = *upd.Admin
		}
		if upd.PasswordHash != nil {
			r.PasswordHash = *upd.PasswordHash
		}
		if upd.Email != nil && lowerEmail(*upd.Email) != lowerEmail(r.Email) {
			if err := changeEmail(tx, r, *upd.Email); err != nil {
				return err
			}
		}
		if upd.Identity != nil {
			if err := checkIdentity(*upd.Identity); err != nil {
				return err
			}
			old := r.domain().Identity
			if err := unbindIdentity(tx, old); err != nil {
				return err
			}
			if err := bindIdentity(tx, id, *upd.Identity); err != nil {
				return err
			}
			r.Identity = newUserRecord(&chartctl.User{Identity: *upd.Identity}).Identity
		}
		if upd.IDPGroups != nil {
			r.IDPGroups = slices.Clone(*upd.IDPGroups)
		}
		if wasEnabledAdmin && !(r.Admin && !r.Disabled) {
			if err := otherEnabledAdmin(tx, id); err != nil {
				return err
			}
		}
		if err := putUserRecord(tx, r); err != nil {
			return err
		}
		if disabling {
			if err := endCredentials(tx, id, db.now()); err != nil {
				return err
			}
		}
		out = r.domain()
		return nil
	})
	return out, wrap("update user", err)
}

// DeleteUser deletes the user with id, their memberships and every
// credential. It returns ENOTFOUND, and ECONFLICT for the last enabled
// admin.
func (db *DB) DeleteUser(ctx context.Context, id string) error {
	return wrap("delete user", db.update(ctx, func(tx *bbolt.Tx) error {
		r, err := getUserRecord(tx, id)
		if err != nil {
			return err
		}
		if r.Admin && !r.Disabled {
			if err := otherEnabledAdmin(tx, id); err != nil {
				return err
			}
		}
		if err := endCredentials(tx, id, db.now()); err != nil {
			return err
		}
		email := lowerEmail(r.Email)
		var teams []string
		pfx := prefix(email)
		err = scanPrefix(bucket(tx, emailTeamsBucket), pfx, func(k, _ []byte) error {
			teams = append(teams, string(k[len(pfx):]))
			return nil
		})
		if err != nil {
			return err
		}
		for _, team := range teams {
			t, m, err := findMember(tx, team, email)
			if err != nil {
				return err
			}
			if err := removeMember(tx, t, m); err != nil {
				return err
			}
		}
		if err := deleteKeys(bucket(tx, orgCreatorsBucket), prefix(id)); err != nil {
			return err
		}
		// The user's repository grants go with the user (decision 2).
		if err := deleteSubjectGrants(tx, id); err != nil {
			return err
		}
		if err := bucket(tx, userEmailsBucket).Delete([]byte(email)); err != nil {
			return err
		}
		if err := unbindIdentity(tx, r.domain().Identity); err != nil {
			return err
		}
		return bucket(tx, usersBucket).Delete([]byte(id))
	}))
}

// TouchUser records that the user was seen at t; a recorded time never
// moves back, and an unknown user is skipped.
func (db *DB) TouchUser(ctx context.Context, id string, t time.Time) error {
	return wrap("touch user", db.db.Update(func(tx *bbolt.Tx) error {
		r, err := getUserRecord(tx, id)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return nil
		} else if err != nil {
			return err
		}
		t = t.UTC().Round(0)
		if r.LastSeenAt != nil && !t.After(*r.LastSeenAt) {
			return nil
		}
		r.LastSeenAt = &t
		return putUserRecord(tx, r)
	}))
}

// changeEmail moves r to email in the email index. It returns EINVALID
// for an unusable email and ECONFLICT when another user has it.
func changeEmail(tx *bbolt.Tx, r *userRecord, email string) error {
	key := lowerEmail(email)
	if key == "" || strings.Contains(key, sep) {
		return chartctl.Invalid("email", "A valid email is required.")
	}
	emails := bucket(tx, userEmailsBucket)
	if cur := emails.Get([]byte(key)); cur != nil && string(cur) != r.ID {
		return chartctl.Errorf(chartctl.ECONFLICT, "A user with email %q already exists.", email)
	}
	old := lowerEmail(r.Email)
	if err := emails.Delete([]byte(old)); err != nil {
		return err
	}
	if err := moveMemberships(tx, old, key, email); err != nil {
		return err
	}
	r.Email = email
	return emails.Put([]byte(key), []byte(r.ID))
}

// moveMemberships moves the team memberships recorded for the lowercased
// email from to the lowercased email to (spelled email), so a user whose
// email changed keeps their teams. Where to is already a member of a
// team, that membership stays and from's goes.
func moveMemberships(tx *bbolt.Tx, from, to, email string) error {
	var teams []string
	pfx := prefix(from)
	err := scanPrefix(bucket(tx, emailTeamsBucket), pfx, func(k, _ []byte) error {
		teams = append(teams, string(k[len(pfx):]))
		return nil
	})
	if err != nil {
		return err
	}
	for _, team := range teams {
		t, m, err := findMember(tx, team, from)
		if err != nil {
			return err
		}
		if bucket(tx, membersBucket).Bucket([]byte(t.Name)).Get([]byte(to)) != nil {
			if err := removeMember(tx, t, m); err != nil {
				return err
			}
			continue
		}
		if err := bucket(tx, membersBucket).Bucket([]byte(t.Name)).Delete([]byte(from)); err != nil {
			return err
		}
		if err := bucket(tx, emailTeamsBucket).Delete(key(from, t.Name)); err != nil {
			return err
		}
		m.Email = email
		if err := putMember(tx, t, to, m); err != nil {
			return err
		}
		if err := bucket(tx, memberIDsBucket).Put([]byte(m.ID), key(t.Name, to)); err != nil {
			return err
		}
	}
	return nil
}

func getUserRecord(tx *bbolt.Tx, id string) (*userRecord, error) {
	v := bucket(tx, usersBucket).Get([]byte(id))
	if v == nil || id == "" {
		return nil, userNotFound()
	}
	return decode[userRecord](v)
}

func putUserRecord(tx *bbolt.Tx, r *userRecord) error {
	v, err := encode(r)
	if err != nil {
		return err
	}
	return bucket(tx, usersBucket).Put([]byte(r.ID), v)
}

// otherEnabledAdmin returns ECONFLICT unless an enabled admin other than
// the user id exists, so the server always keeps one.
func otherEnabledAdmin(tx *bbolt.Tx, id string) error {
	found := false
	err := bucket(tx, usersBucket).ForEach(func(k, v []byte) error {
		if found || string(k) == id {
			return nil
		}
		r, err := decode[userRecord](v)
		if err != nil {
			return err
		}
		found = r.Admin && !r.Disabled
		return nil
	})
	if err != nil {
		return err
	}
	if !found {
		return chartctl.Errorf(chartctl.ECONFLICT, "This is the last enabled server admin; make another user an admin first.")
	}
	return nil
}

// endCredentials ends every credential of the user: deletes their API
// keys and dashboard sessions, deletes their unredeemed authorization
// codes and revokes their OAuth grants and tokens.
func endCredentials(tx *bbolt.Tx, userID string, now time.Time) error {
	keyIndex := bucket(tx, userAPIKeysBucket)
	pfx := prefix(userID)
	var keyIDs []string
	err := scanPrefix(keyIndex, pfx, func(k, _ []byte) error {
		keyIDs = append(keyIDs, string(k[len(pfx):]))
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range keyIDs {
		r, err := getAPIKey(tx, []byte(id))
		if err == nil {
			if err := bucket(tx, apiKeyHashesBucket).Delete(r.Hash); err != nil {
				return err
			}
		}
		if err := bucket(tx, apiKeysBucket).Delete([]byte(id)); err != nil {
			return err
		}
		if err := keyIndex.Delete(key(userID, id)); err != nil {
			return err
		}
	}

	if err := deleteWhere(bucket(tx, webSessionsBucket), userID); err != nil {
		return err
	}
	if err := deleteWhere(bucket(tx, oauthCodesBucket), userID); err != nil {
		return err
	}
	tokens := bucket(tx, oauthTokensBucket)
	grants := map[string]bool{}
	type change struct{ k, v []byte }
	var changes []change
	err = tokens.ForEach(func(k, v []byte) error {
		r, err := decode[oauthTokenRecord](v)
		if err != nil {
			return err
		}
		if r.UserID != userID {
			return nil
		}
		grants[r.GrantID] = true
		if r.Revoked {
			return nil
		}
		r.Revoked = true
		nv, err := encode(r)
		if err != nil {
			return err
		}
		changes = append(changes, change{bytes.Clone(k), nv})
		return nil
	})
	if err != nil {
		return err
	}
	for _, c := range changes {
		if err := tokens.Put(c.k, c.v); err != nil {
			return err
		}
	}
	ids := make([]string, 0, len(grants))
	for id := range grants {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := revokeGrant(tx, id, now); err != nil {
			return err
		}
	}
	return nil
}

// ownerRecord reads only the user of a code or session record.
type ownerRecord struct {
	UserID string `json:"user_id"`
}

// deleteWhere deletes the records of b that belong to userID.
func deleteWhere(b *bbolt.Bucket, userID string) error {
	_, err := deleteMatching(b, func(_ []byte, r ownerRecord) bool { return r.UserID == userID })
	return err
}

// keysMatching returns the keys of the records of b, decoded as R, that
// match. Deleting them is left to the caller: bbolt's cursor must not see
// its bucket change under it.
func keysMatching[R any](b *bbolt.Bucket, match func(k []byte, r R) bool) ([][]byte, error) {
	var keys [][]byte
	err := b.ForEach(func(k, v []byte) error {
		r, err := decode[R](v)
		if err != nil {
			return err
		}
		if match(k, *r) {
			keys = append(keys, bytes.Clone(k))
		}
		return nil
	})
	return keys, err
}

// deleteMatching deletes the records of b, decoded as R, that match, and
// returns how many it deleted.
func deleteMatching[R any](b *bbolt.Bucket, match func(k []byte, r R) bool) (int, error) {
	dead, err := keysMatching(b, match)
	if err != nil {
		return 0, err
	}
	return len(dead), deleteEach(b, dead)
}

// deleteKeys deletes every key of b starting with pfx.
func deleteKeys(b *bbolt.Bucket, pfx []byte) error {
	var dead [][]byte
	err := scanPrefix(b, pfx, func(k, _ []byte) error {
		dead = append(dead, bytes.Clone(k))
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range dead {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
