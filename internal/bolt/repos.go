package bolt

import (
	"context"
	"sort"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// CreateRepository stores r, filling ID and CreatedAt when empty and
// Visibility (private) when empty. It returns EINVALID for an invalid name
// or visibility, ECONFLICT if the name is taken, and ENOTFOUND if
// r.Organization is set and does not exist.
func (db *DB) CreateRepository(ctx context.Context, r *chartctl.Repository) error {
	if err := chartctl.ValidateName("name", r.Name); err != nil {
		return err
	}
	if r.Visibility == "" {
		r.Visibility = chartctl.VisibilityPrivate
	}
	if !r.Visibility.Valid() {
		return chartctl.Invalid("visibility", "Invalid visibility %q: use private or public.", r.Visibility)
	}
	if err := db.fill(&r.ID, prefixRepo, &r.CreatedAt); err != nil {
		return err
	}
	return wrap("create repository", db.db.Update(func(tx *bbolt.Tx) error {
		repos := bucket(tx, reposBucket)
		if repos.Get([]byte(r.Name)) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "Repository %q already exists.", r.Name)
		}
		if r.Organization != "" && bucket(tx, orgsBucket).Get([]byte(r.Organization)) == nil {
			return orgNotFound(r.Organization)
		}
		v, err := encode(newRepoRecord(r))
		if err != nil {
			return err
		}
		if err := repos.Put([]byte(r.Name), v); err != nil {
			return err
		}
		// A bucket left by an earlier repository of the same name would
		// have been removed with it; start this one empty.
		charts := bucket(tx, chartsBucket)
		if charts.Bucket([]byte(r.Name)) != nil {
			if err := charts.DeleteBucket([]byte(r.Name)); err != nil {
				return err
			}
		}
		_, err = charts.CreateBucket([]byte(r.Name))
		return err
	}))
}

// Repository returns the repository named name. It returns ENOTFOUND if
// none.
func (db *DB) Repository(ctx context.Context, name string) (*chartctl.Repository, error) {
	var r *chartctl.Repository
	err := db.db.View(func(tx *bbolt.Tx) error {
		rec, err := getRepo(tx, name)
		if err != nil {
			return err
		}
		r = rec.domain()
		return nil
	})
	return r, wrap("get repository", err)
}

// Repositories returns every repository, by name.
func (db *DB) Repositories(ctx context.Context) ([]*chartctl.Repository, error) {
	var out []*chartctl.Repository
	err := db.db.View(func(tx *bbolt.Tx) error {
		return bucket(tx, reposBucket).ForEach(func(_, v []byte) error {
			r, err := decode[repoRecord](v)
			if err != nil {
				return err
			}
			out = append(out, r.domain())
			return nil
		})
	})
	if err != nil {
		return nil, wrap("list repositories", err)
	}
	return out, nil
}

// DeleteRepository deletes the repository and all its chart versions,
// returning (sorted) the blob digests no record refers to any more. It
// returns ENOTFOUND if the repository does not exist.
func (db *DB) DeleteRepository(ctx context.Context, name string) ([]string, error) {
	var orphans []string
	err := db.db.Update(func(tx *bbolt.Tx) error {
		if _, err := getRepo(tx, name); err != nil {
			return err
		}
		charts := bucket(tx, chartsBucket)
		if cb := charts.Bucket([]byte(name)); cb != nil {
			refs := bucket(tx, blobRefsBucket)
			if err := cb.ForEach(func(_, v []byte) error {
				r, err := decode[chartRecord](v)
				if err != nil {
					return err
				}
				for _, d := range chartDigests(r) {
					gone, err := dropRef(refs, d)
					if err != nil {
						return err
					}
					if gone {
						orphans = append(orphans, d)
					}
				}
				return nil
			}); err != nil {
				return err
			}
			if err := charts.DeleteBucket([]byte(name)); err != nil {
				return err
			}
			if idx := bucket(tx, chartIndexBucket); idx.Bucket([]byte(name)) != nil {
				if err := idx.DeleteBucket([]byte(name)); err != nil {
					return err
				}
			}
		}
		return bucket(tx, reposBucket).Delete([]byte(name))
	})
	if err != nil {
		return nil, wrap("delete repository", err)
	}
	sort.Strings(orphans)
	return orphans, nil
}

func getRepo(tx *bbolt.Tx, name string) (*repoRecord, error) {
	v := bucket(tx, reposBucket).Get([]byte(name))
	if v == nil {
		return nil, repoNotFound(name)
	}
	return decode[repoRecord](v)
}

func repoNotFound(name string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Repository %q not found.", name)
}

// UpdateRepository implements chartctl.Store.
func (db *DB) UpdateRepository(ctx context.Context, name string, description *string, visibility *chartctl.Visibility) (*chartctl.Repository, error) {
	if visibility != nil && !visibility.Valid() {
		return nil, chartctl.Invalid("visibility", "Invalid visibility %q: use private or public.", *visibility)
	}
	var out *chartctl.Repository
	err := db.db.Update(func(tx *bbolt.Tx) error {
		rec, err := getRepo(tx, name)
		if err != nil {
			return err
		}
		if description != nil {
			rec.Description = *description
		}
		if visibility != nil {
			rec.Visibility = string(*visibility)
		}
		v, err := encode(rec)
		if err != nil {
			return err
		}
		if err := bucket(tx, reposBucket).Put([]byte(name), v); err != nil {
			return err
		}
		out = rec.domain()
		return nil
	})
	return out, wrap("update repository", err)
}
