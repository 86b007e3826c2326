package bolt

import (
	"context"
	"sort"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// CreateRepository stores r, filling ID and CreatedAt when empty and
// Visibility (private) when empty. It returns EINVALID for an invalid name
// or visibility, and ENOTFOUND if r.Organization is set and does not
// exist. It returns ECONFLICT if the name is taken, or if it belonged to a
// repository of another owner deleted less than the name grace period ago
// (see NameGrace); both say only that the name is not available, so the
// message confirms nothing about a repository the caller cannot see.
func (db *DB) CreateRepository(ctx context.Context, r *chartctl.Repository) error {
	if err := chartctl.ValidateName("name", r.Name); err != nil {
		return err
	}
	if r.Visibility == "" {
		r.Visibility = chartctl.VisibilityPrivate
	}
	if !r.Visibility.Valid() {
		return chartctl.Invalid("visibility", "Invalid visibility %q: use private, internal or public.", r.Visibility)
	}
	// A caller that does not choose (a restore of an older backup, an
	// import) gets the format every repository had before formats.
	r.IndexFormat = r.IndexFormat.OrYAML()
	if !r.IndexFormat.Valid() {
		return chartctl.InvalidIndexFormat(r.IndexFormat)
	}
	if err := db.fill(&r.ID, prefixRepo, &r.CreatedAt); err != nil {
		return err
	}
	return wrap("create repository", db.update(ctx, func(tx *bbolt.Tx) error {
		repos := bucket(tx, reposBucket)
		if repos.Get([]byte(r.Name)) != nil {
			return nameNotAvailable(r.Name)
		}
		if err := db.claimTombstone(tx, r); err != nil {
			return err
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
		if _, err := charts.CreateBucket([]byte(r.Name)); err != nil {
			return err
		}
		if sem := bucket(tx, chartSemverBucket); sem.Bucket([]byte(r.Name)) != nil {
			if err := sem.DeleteBucket([]byte(r.Name)); err != nil {
				return err
			}
		}
		if err := dropHeld(tx, r.Name); err != nil {
			return err
		}
		// A new repository of a name: a generation of its own.
		if err := touchIndex(tx, r.Name); err != nil {
			return err
		}
		return dropTags(tx, r.Name)
	}))
}

// claimTombstone lets r take the name of a deleted repository: at once for
// the same owner (the same organization, or for personal repositories the
// same user), for another owner only once the name grace period has
// passed. It removes the tombstone it lets pass.
func (db *DB) claimTombstone(tx *bbolt.Tx, r *chartctl.Repository) error {
	tombs := bucket(tx, repoTombstonesBucket)
	v := tombs.Get([]byte(r.Name))
	if v == nil {
		return nil
	}
	t, err := decode[repoTombstoneRecord](v)
	if err != nil {
		return err
	}
	sameOwner := t.Organization == r.Organization && (t.Organization != "" || t.OwnerID == r.OwnerID)
	if !sameOwner && db.now().Before(t.DeletedAt.Add(db.nameGrace)) {
		return nameNotAvailable(r.Name)
	}
	return tombs.Delete([]byte(r.Name))
}

// putTombstone reserves the name of the repository being deleted for its
// owner, and purges the tombstones whose grace period has passed.
func (db *DB) putTombstone(tx *bbolt.Tx, r *repoRecord) error {
	tombs := bucket(tx, repoTombstonesBucket)
	now := db.now()
	var expired [][]byte
	if err := tombs.ForEach(func(k, v []byte) error {
		t, err := decode[repoTombstoneRecord](v)
		if err != nil || !now.Before(t.DeletedAt.Add(db.nameGrace)) {
			expired = append(expired, append([]byte(nil), k...))
		}
		return nil
	}); err != nil {
		return err
	}
	for _, k := range expired {
		if err := tombs.Delete(k); err != nil {
			return err
		}
	}
	if db.nameGrace <= 0 {
		return nil
	}
	v, err := encode(&repoTombstoneRecord{OwnerID: r.OwnerID, Organization: r.Organization, DeletedAt: now})
	if err != nil {
		return err
	}
	return tombs.Put([]byte(r.Name), v)
}

// nameNotAvailable is the conflict for a repository, organization or team
// name that is taken. It is the same whatever took the name, so it tells
// nothing about a resource the caller cannot see.
func nameNotAvailable(name string) error {
	return chartctl.Errorf(chartctl.ECONFLICT, "The name %q is not available.", name)
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
// returning (sorted) the blob digests no record refers to any more, and
// reserves its name for its owner for the name grace period (purging the
// reservations that have expired). It returns ENOTFOUND if the repository
// does not exist.
func (db *DB) DeleteRepository(ctx context.Context, name string) ([]string, error) {
	var orphans []string
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		repo, err := getRepo(tx, name)
		if err != nil {
			return err
		}
		if err := dropRepoUsage(tx, repo); err != nil {
			return err
		}
		if err := dropDownloads(tx, name, "", ""); err != nil {
			return err
		}
		if err := bucket(tx, retentionBucket).Delete([]byte(name)); err != nil {
			return err
		}
		// What is bound to the repository goes with it (CONTRACT §18
		// decision 2), before the change's events are queued: its own
		// webhooks do not receive its repository.deleted, and a later
		// repository of the name starts with none of them.
		if err := deleteRepoWebhooks(tx, repo); err != nil {
			return err
		}
		if err := deleteRepoUploads(tx, repo); err != nil {
			return err
		}
		if err := deleteRepoGrants(tx, repo.ID); err != nil {
			return err
		}
		if err := deleteRepoReplications(tx, repo.ID); err != nil {
			return err
		}
		if err := deleteScopeTrust(tx, chartctl.TrustScopeRepository, repo.ID); err != nil {
			return err
		}
		if err := deletePolicy(tx, chartctl.PolicyRepository, repo.ID); err != nil {
			return err
		}
		if err := db.putTombstone(tx, repo); err != nil {
			return err
		}
		if sem := bucket(tx, chartSemverBucket); sem.Bucket([]byte(name)) != nil {
			if err := sem.DeleteBucket([]byte(name)); err != nil {
				return err
			}
		}
		if err := dropTags(tx, name); err != nil {
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
			if err := dropHeld(tx, name); err != nil {
				return err
			}
		}
		if err := dropIndexGen(tx, name); err != nil {
			return err
		}
		unlinked, err := deleteOCIRepo(tx, name)
		if err != nil {
			return err
		}
		for _, d := range unlinked {
			if !ociBlobLinked(tx, d) && refCount(bucket(tx, blobRefsBucket), d) == 0 {
				orphans = append(orphans, d)
			}
		}
		return bucket(tx, reposBucket).Delete([]byte(name))
	})
	if err != nil {
		return nil, wrap("delete repository", err)
	}
	orphans = uniq(orphans)
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
func (db *DB) UpdateRepository(ctx context.Context, name string, u chartctl.RepositoryUpdate) (*chartctl.Repository, error) {
	description, visibility := u.Description, u.Visibility
	if visibility != nil && !visibility.Valid() {
		return nil, chartctl.Invalid("visibility", "Invalid visibility %q: use private, internal or public.", *visibility)
	}
	if u.IndexFormat != nil && !u.IndexFormat.Valid() {
		return nil, chartctl.InvalidIndexFormat(*u.IndexFormat)
	}
	var out *chartctl.Repository
	err := db.update(ctx, func(tx *bbolt.Tx) error {
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
		if u.IndexFormat != nil {
			rec.IndexFormat = string(*u.IndexFormat)
		}
		if u.ArtifactHub != nil {
			rec.ArtifactHub = newArtifactHubRecord(u.ArtifactHub)
		}
		if u.Proxy != nil {
			if rec.Proxy == nil {
				return notProxy(name)
			}
			rec.Proxy = newProxyRecord(u.Proxy)
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

// notProxy is the EINVALID error of proxy settings for a repository that
// is not a proxy.
func notProxy(name string) error {
	return chartctl.Invalid("proxy", "Repository %q is not a proxy: a repository is created as a proxy (or not) and stays so.", name)
}
