package bolt

import (
	"context"
	"slices"
	"sort"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

const (
	prefixSCIMToken = "scimtok_"
	prefixSCIMGroup = "scimgrp_"
)

type scimTokenRecord struct {
	ID         string     `json:"id"`
	Name       string     `json:"name,omitempty"`
	Hash       []byte     `json:"hash"`
	CreatedBy  string     `json:"created_by,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
}

func (r *scimTokenRecord) domain() *chartctl.SCIMToken {
	return &chartctl.SCIMToken{ID: r.ID, Name: r.Name, Hash: r.Hash, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt}
}

type scimGroupRecord struct {
	ID          string    `json:"id"`
	DisplayName string    `json:"display_name"`
	ExternalID  string    `json:"external_id,omitempty"`
	Members     []string  `json:"members,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func (r *scimGroupRecord) domain() *chartctl.SCIMGroup {
	return &chartctl.SCIMGroup{ID: r.ID, DisplayName: r.DisplayName, ExternalID: r.ExternalID, Members: r.Members, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// CreateSCIMToken implements chartctl.SCIMStore.
func (db *DB) CreateSCIMToken(ctx context.Context, t *chartctl.SCIMToken) error {
	if len(t.Hash) == 0 {
		return chartctl.Invalid("token", "A SCIM token needs a hash.")
	}
	if err := db.fill(&t.ID, prefixSCIMToken, &t.CreatedAt); err != nil {
		return err
	}
	return wrap("create scim token", db.update(ctx, func(tx *bbolt.Tx) error {
		if bucket(tx, scimTokensBucket).Get([]byte(t.ID)) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "A SCIM token with ID %q already exists.", t.ID)
		}
		if bucket(tx, scimTokenHashesBucket).Get(t.Hash) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "A SCIM token with this value already exists.")
		}
		v, err := encode(&scimTokenRecord{ID: t.ID, Name: t.Name, Hash: t.Hash, CreatedBy: t.CreatedBy, CreatedAt: t.CreatedAt, LastUsedAt: t.LastUsedAt})
		if err != nil {
			return err
		}
		if err := bucket(tx, scimTokensBucket).Put([]byte(t.ID), v); err != nil {
			return err
		}
		return bucket(tx, scimTokenHashesBucket).Put(t.Hash, []byte(t.ID))
	}))
}

// SCIMTokens implements chartctl.SCIMStore.
func (db *DB) SCIMTokens(ctx context.Context) ([]*chartctl.SCIMToken, error) {
	var out []*chartctl.SCIMToken
	err := db.db.View(func(tx *bbolt.Tx) error {
		return bucket(tx, scimTokensBucket).ForEach(func(_, v []byte) error {
			r, err := decode[scimTokenRecord](v)
			if err != nil {
				return err
			}
			out = append(out, r.domain())
			return nil
		})
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, wrap("list scim tokens", err)
}

func getSCIMToken(tx *bbolt.Tx, id string) (*scimTokenRecord, error) {
	v := bucket(tx, scimTokensBucket).Get([]byte(id))
	if v == nil {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "SCIM token %q not found.", id)
	}
	return decode[scimTokenRecord](v)
}

// SCIMTokenByHash implements chartctl.SCIMStore.
func (db *DB) SCIMTokenByHash(ctx context.Context, hash []byte) (*chartctl.SCIMToken, error) {
	var out *chartctl.SCIMToken
	err := db.db.View(func(tx *bbolt.Tx) error {
		id := bucket(tx, scimTokenHashesBucket).Get(hash)
		if id == nil {
			return chartctl.Errorf(chartctl.ENOTFOUND, "SCIM token not found.")
		}
		r, err := getSCIMToken(tx, string(id))
		if err != nil {
			return err
		}
		out = r.domain()
		return nil
	})
	return out, wrap("get scim token", err)
}

// TouchSCIMToken implements chartctl.SCIMStore.
func (db *DB) TouchSCIMToken(ctx context.Context, id string, t time.Time) error {
	return wrap("touch scim token", db.db.Update(func(tx *bbolt.Tx) error {
		r, err := getSCIMToken(tx, id)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return nil
		} else if err != nil {
			return err
		}
		t = t.UTC().Round(0)
		r.LastUsedAt = &t
		v, err := encode(r)
		if err != nil {
			return err
		}
		return bucket(tx, scimTokensBucket).Put([]byte(id), v)
	}))
}

// DeleteSCIMToken implements chartctl.SCIMStore.
func (db *DB) DeleteSCIMToken(ctx context.Context, id string) error {
	return wrap("delete scim token", db.update(ctx, func(tx *bbolt.Tx) error {
		r, err := getSCIMToken(tx, id)
		if err != nil {
			return err
		}
		if err := bucket(tx, scimTokenHashesBucket).Delete(r.Hash); err != nil {
			return err
		}
		return bucket(tx, scimTokensBucket).Delete([]byte(id))
	}))
}

// PutSCIMGroup implements chartctl.SCIMStore.
func (db *DB) PutSCIMGroup(ctx context.Context, g *chartctl.SCIMGroup) error {
	if g.DisplayName == "" {
		return chartctl.Invalid("displayName", "A group needs a displayName.")
	}
	if err := db.fill(&g.ID, prefixSCIMGroup, &g.CreatedAt); err != nil {
		return err
	}
	if g.UpdatedAt.IsZero() {
		g.UpdatedAt = g.CreatedAt
	}
	members := slices.Clone(g.Members)
	slices.Sort(members)
	g.Members = slices.Compact(members)
	return wrap("put scim group", db.update(ctx, func(tx *bbolt.Tx) error {
		names := bucket(tx, scimGroupNamesBucket)
		if cur := names.Get([]byte(g.DisplayName)); cur != nil && string(cur) != g.ID {
			return chartctl.Errorf(chartctl.ECONFLICT, "A group named %q already exists.", g.DisplayName)
		}
		groups := bucket(tx, scimGroupsBucket)
		if v := groups.Get([]byte(g.ID)); v != nil {
			old, err := decode[scimGroupRecord](v)
			if err != nil {
				return err
			}
			if err := names.Delete([]byte(old.DisplayName)); err != nil {
				return err
			}
		}
		v, err := encode(&scimGroupRecord{ID: g.ID, DisplayName: g.DisplayName, ExternalID: g.ExternalID, Members: g.Members, CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt})
		if err != nil {
			return err
		}
		if err := groups.Put([]byte(g.ID), v); err != nil {
			return err
		}
		return names.Put([]byte(g.DisplayName), []byte(g.ID))
	}))
}

func getSCIMGroup(tx *bbolt.Tx, id string) (*scimGroupRecord, error) {
	v := bucket(tx, scimGroupsBucket).Get([]byte(id))
	if v == nil {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "Group %q not found.", id)
	}
	return decode[scimGroupRecord](v)
}

// SCIMGroup implements chartctl.SCIMStore.
func (db *DB) SCIMGroup(ctx context.Context, id string) (*chartctl.SCIMGroup, error) {
	var out *chartctl.SCIMGroup
	err := db.db.View(func(tx *bbolt.Tx) error {
		r, err := getSCIMGroup(tx, id)
		if err != nil {
			return err
		}
		out = r.domain()
		return nil
	})
	return out, wrap("get scim group", err)
}

// SCIMGroups implements chartctl.SCIMStore.
func (db *DB) SCIMGroups(ctx context.Context) ([]*chartctl.SCIMGroup, error) {
	var out []*chartctl.SCIMGroup
	err := db.db.View(func(tx *bbolt.Tx) error {
		groups := bucket(tx, scimGroupsBucket)
		// The names bucket is sorted by display name.
		return bucket(tx, scimGroupNamesBucket).ForEach(func(_, id []byte) error {
			v := groups.Get(id)
			if v == nil {
				return nil
			}
			r, err := decode[scimGroupRecord](v)
			if err != nil {
				return err
			}
			out = append(out, r.domain())
			return nil
		})
	})
	return out, wrap("list scim groups", err)
}

// DeleteSCIMGroup implements chartctl.SCIMStore.
func (db *DB) DeleteSCIMGroup(ctx context.Context, id string) error {
	return wrap("delete scim group", db.update(ctx, func(tx *bbolt.Tx) error {
		r, err := getSCIMGroup(tx, id)
		if err != nil {
			return err
		}
		if err := bucket(tx, scimGroupNamesBucket).Delete([]byte(r.DisplayName)); err != nil {
			return err
		}
		return bucket(tx, scimGroupsBucket).Delete([]byte(id))
	}))
}
