package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// OCI artifacts count against quotas (CONTRACT §18 decision 12), as in
// the bolt store: the bytes of every manifest stored under a repository's
// OCI names that is not a chart version, and of every blob such a
// manifest refers to, once per name that holds it. Chart versions count
// as their archive and provenance whichever protocol brought them. The
// OCI part is counted from the records when a quota asks for it, so
// nothing stored changes and data of an older release needs no recount.

// ociBytes returns the OCI bytes of a repository, or of every repository
// of an organization.
func ociBytes(ctx context.Context, q querier, sc scope) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, `WITH repos AS (
			SELECT name FROM repositories
			WHERE CASE WHEN $1 = 'repository' THEN name = $2 ELSE organization = $2 END
		), m AS (
			SELECT o.name, o.digest, length(o.content)::bigint AS size FROM oci_manifests o
			WHERE o.chart_repository IS NULL AND split_part(o.name, '/', 1) IN (SELECT name FROM repos)
		), held AS (
			SELECT DISTINCT b.name, b.blob FROM oci_manifest_blobs b JOIN m ON m.name = b.name AND m.digest = b.manifest
		)
		SELECT (COALESCE((SELECT sum(size) FROM m), 0)
			+ COALESCE((SELECT sum(l.size) FROM oci_blob_links l JOIN held h ON l.name = h.name AND l.digest = h.blob), 0))::bigint`,
		sc.kind, sc.name).Scan(&n)
	return n, err
}

// withOCIQuota runs write, which stores OCI content under name, and
// refuses it with EQUOTA (the transaction then rolls back) when it made
// the repository of name or its organization grow past a max_bytes
// quota. It locks the usage rows of the scopes with such a quota first,
// in the order chart writes do (organization, then repository), so
// concurrent pushes into one scope queue instead of both passing.
func withOCIQuota(ctx context.Context, tx pgx.Tx, name string, write func() error) error {
	repoName, _, _ := strings.Cut(name, "/")
	id, err := repoID(ctx, tx, repoName)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		// Names outside any repository are refused by the registry
		// before they reach the store.
		return write()
	} else if err != nil {
		return err
	}
	scopes, err := repoScopes(ctx, tx, id)
	if err != nil {
		return err
	}
	type limited struct {
		sc                scope
		max, used, before int64
	}
	var ls []limited
	for _, sc := range scopes {
		var maxB *int64
		err := tx.QueryRow(ctx, `SELECT max_bytes FROM quotas WHERE scope = $1 AND name = $2`, sc.kind, sc.name).Scan(&maxB)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && maxB == nil) {
			continue
		} else if err != nil {
			return err
		}
		l := limited{sc: sc, max: *maxB}
		lock := func() error {
			return tx.QueryRow(ctx, `SELECT bytes FROM usage WHERE scope = $1 AND name = $2 FOR UPDATE`, sc.kind, sc.name).Scan(&l.used)
		}
		if err := lock(); errors.Is(err, pgx.ErrNoRows) {
			if err := countUsage(ctx, tx, sc); err != nil {
				return err
			}
			if err := lock(); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		if l.before, err = ociBytes(ctx, tx, sc); err != nil {
			return err
		}
		ls = append(ls, l)
	}
	if err := write(); err != nil {
		return err
	}
	for _, l := range ls {
		after, err := ociBytes(ctx, tx, l.sc)
		if err != nil {
			return err
		}
		if after > l.before && l.used+after > l.max {
			return quotaError(l.sc, "max_bytes", fmt.Sprintf("%d bytes", l.max),
				fmt.Sprintf("%d bytes used; this upload needs %d more", l.used+l.before, after-l.before))
		}
	}
	return nil
}
