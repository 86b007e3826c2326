package bolt

import (
	"context"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// UpdateMirror replaces the settings of the mirror repository name,
// keeping its sync state, with the Change ctx carries. It returns
// ENOTFOUND, or EINVALID when the repository is not a mirror.
func (db *DB) UpdateMirror(ctx context.Context, name string, s chartctl.MirrorSettings) (*chartctl.Repository, error) {
	var out *chartctl.Repository
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		rec, err := getRepo(tx, name)
		if err != nil {
			return err
		}
		if rec.Mirror == nil {
			return notMirror(name)
		}
		rec.Mirror.setSettings(s)
		if err := putRepo(tx, rec); err != nil {
			return err
		}
		out = rec.domain()
		return nil
	})
	return out, wrap("update mirror", err)
}

// SetMirrorState records the sync state of the mirror repository name if
// its ID is still id. It returns ENOTFOUND otherwise.
func (db *DB) SetMirrorState(ctx context.Context, name, id string, st chartctl.MirrorState) error {
	return wrap("record mirror state", db.update(ctx, func(tx *bbolt.Tx) error {
		rec, err := getRepo(tx, name)
		if err != nil {
			return err
		}
		if rec.ID != id || rec.Mirror == nil {
			return repoNotFound(name)
		}
		rec.Mirror.setState(st)
		return putRepo(tx, rec)
	}))
}

func putRepo(tx *bbolt.Tx, rec *repoRecord) error {
	v, err := encode(rec)
	if err != nil {
		return err
	}
	return bucket(tx, reposBucket).Put([]byte(rec.Name), v)
}

func notMirror(name string) error {
	return chartctl.Invalid("mirror", "Repository %q is not a mirror; mirror settings belong to a repository created as one.", name)
}
