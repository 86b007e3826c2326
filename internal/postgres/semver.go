package postgres

import (
	"context"
	"strconv"

	"github.com/Masterminds/semver/v3"
	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// canonicalVersion returns the SemVer identity of a chart version as Helm
// parses it (Masterminds semver, which accepts a leading "v" and short
// forms such as "1.2"): MAJOR.MINOR.PATCH[-PRERELEASE], build metadata
// dropped. "1.0.0", "v1.0.0" and "1.0.0+build.7" all give "1.0.0". ok is
// false for a version that is not SemVer; such a version is equal only to
// itself. It is bolt's rule.
func canonicalVersion(v string) (canon string, ok bool) {
	sv, err := semver.NewVersion(v)
	if err != nil {
		return "", false
	}
	b := make([]byte, 0, len(v))
	b = strconv.AppendUint(b, sv.Major(), 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, sv.Minor(), 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, sv.Patch(), 10)
	if pre := sv.Prerelease(); pre != "" {
		b = append(b, '-')
		b = append(b, pre...)
	}
	return string(b), true
}

// canonicalOrNil is canonicalVersion as a column value: nil when the
// version is not SemVer.
func canonicalOrNil(v string) *string {
	if c, ok := canonicalVersion(v); ok {
		return &c
	}
	return nil
}

// semverConflict is the error for a version SemVer-equal to a stored one.
func semverConflict(name, version, stored string) error {
	return chartctl.Errorf(chartctl.ECONFLICT,
		"Chart %s version %s already exists, and version %s is the same SemVer version (a leading \"v\" and build metadata after \"+\" do not make a new version). Use a new version number.",
		name, stored, version)
}

// fillCanonicalVersions sets canonical_version for the versions stored
// before schema version 2. Versions already stored that are SemVer-equal
// to each other all stay readable: the first (by version string) gets the
// canonical version, the others none, so only new uploads are refused.
func fillCanonicalVersions(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT repository_id, name, version FROM chart_versions ORDER BY repository_id, name, version`)
	if err != nil {
		return err
	}
	type key struct{ repo, name, version string }
	var keys []key
	var k key
	if _, err := pgx.ForEachRow(rows, []any{&k.repo, &k.name, &k.version}, func() error {
		keys = append(keys, k)
		return nil
	}); err != nil {
		return err
	}
	for _, k := range keys {
		canon, ok := canonicalVersion(k.version)
		if !ok {
			continue
		}
		if _, err := tx.Exec(ctx, `UPDATE chart_versions SET canonical_version = $4
			WHERE repository_id = $1 AND name = $2 AND version = $3 AND NOT EXISTS (
				SELECT 1 FROM chart_versions WHERE repository_id = $1 AND name = $2 AND canonical_version = $4)`,
			k.repo, k.name, k.version, canon); err != nil {
			return err
		}
	}
	return nil
}
