package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// UpdateMirror replaces the settings of the mirror repository name,
// keeping its sync state, with the Change ctx carries; other replicas drop
// their cached record of it. It returns ENOTFOUND, or EINVALID when the
// repository is not a mirror.
func (db *DB) UpdateMirror(ctx context.Context, name string, s chartctl.MirrorSettings) (*chartctl.Repository, error) {
	if !storable(name) {
		return nil, repoNotFound(name)
	}
	var out *chartctl.Repository
	err := db.mutate(ctx, "update mirror", func(tx pgx.Tx) error {
		var id string
		var mirror bool
		err := tx.QueryRow(ctx, `SELECT id, mirror_url IS NOT NULL FROM repositories WHERE name = $1 FOR UPDATE`, name).Scan(&id, &mirror)
		if errors.Is(err, pgx.ErrNoRows) {
			return repoNotFound(name)
		} else if err != nil {
			return err
		}
		if !mirror {
			return chartctl.Invalid("mirror", "Repository %q is not a mirror; mirror settings belong to a repository created as one.", name)
		}
		if err := setMirror(ctx, tx, id, s); err != nil {
			return err
		}
		if out, err = scanRepo(tx.QueryRow(ctx, `SELECT `+repoCols+` FROM repositories WHERE id = $1`, id)); err != nil {
			return err
		}
		return db.changed(ctx, tx, id, name, "", "")
	})
	return out, err
}

// SetMirrorState records the sync state of the mirror repository name if
// its ID is still id, with the Change ctx carries, if any. It returns
// ENOTFOUND otherwise. Other replicas see the new state when their cached
// record of the repository expires (a second), so a sync does not make
// every replica reload the repository's index.
func (db *DB) SetMirrorState(ctx context.Context, name, id string, st chartctl.MirrorState) error {
	if !storable(name, id) {
		return repoNotFound(name)
	}
	return db.mutate(ctx, "record mirror state", func(tx pgx.Tx) error {
		var found bool
		err := tx.QueryRow(ctx, `SELECT mirror_url IS NOT NULL FROM repositories WHERE name = $1 AND id = $2 FOR UPDATE`, name, id).Scan(&found)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && !found) {
			return repoNotFound(name)
		} else if err != nil {
			return err
		}
		return setMirrorState(ctx, tx, id, st)
	})
}

func setMirror(ctx context.Context, tx pgx.Tx, id string, s chartctl.MirrorSettings) error {
	var pw []byte
	if len(s.Password) > 0 {
		pw = s.Password
	}
	_, err := tx.Exec(ctx, `UPDATE repositories SET mirror_url = $2, mirror_interval_seconds = $3, mirror_username = $4,
		mirror_password = $5 WHERE id = $1`, id, text(s.URL), int64(s.Interval/time.Second), text(s.Username), pw)
	return err
}

func setMirrorState(ctx context.Context, tx pgx.Tx, id string, st chartctl.MirrorState) error {
	_, err := tx.Exec(ctx, `UPDATE repositories SET mirror_status = $2, mirror_last_sync_at = $3, mirror_last_attempt_at = $4,
		mirror_error = $5 WHERE id = $1`, id, string(st.Status), st.LastSyncAt, st.LastAttemptAt, text(st.Error))
	return err
}
