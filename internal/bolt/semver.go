package bolt

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/Masterminds/semver/v3"
	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// canonicalVersion returns the SemVer identity of a chart version as Helm
// parses it (Masterminds semver, which accepts a leading "v" and short
// forms such as "1.2"): MAJOR.MINOR.PATCH[-PRERELEASE], build metadata
// dropped, because SemVer gives build metadata no part in precedence.
// "1.0.0", "v1.0.0" and "1.0.0+build.7" all give "1.0.0". ok is false for
// a version that is not SemVer; such a version is equal only to itself.
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

// semverKey is the key of a version in a repository's bucket of
// chartSemverBucket.
func semverKey(name, canon, version string) []byte { return key(name, canon, version) }

// semverEqual returns a stored version of chart name in sb SemVer-equal to
// canon other than version, or "" if there is none. It seeks once.
func semverEqual(sb *bbolt.Bucket, name, canon, version string) string {
	if sb == nil {
		return ""
	}
	pfx := key(name, canon, "")
	c := sb.Cursor()
	for k, _ := c.Seek(pfx); k != nil && bytes.HasPrefix(k, pfx); k, _ = c.Next() {
		if other := string(k[len(pfx):]); other != version {
			return other
		}
	}
	return ""
}

// indexSemver adds (name, version) to repo's SemVer index; a version that
// is not SemVer is not indexed.
func indexSemver(tx *bbolt.Tx, repo, name, version string) error {
	canon, ok := canonicalVersion(version)
	if !ok {
		return nil
	}
	sb, err := bucket(tx, chartSemverBucket).CreateBucketIfNotExists([]byte(repo))
	if err != nil {
		return err
	}
	return sb.Put(semverKey(name, canon, version), nil)
}

// unindexSemver removes (name, version) from repo's SemVer index.
func unindexSemver(tx *bbolt.Tx, repo, name, version string) error {
	canon, ok := canonicalVersion(version)
	if !ok {
		return nil
	}
	sb := bucket(tx, chartSemverBucket).Bucket([]byte(repo))
	if sb == nil {
		return nil
	}
	return sb.Delete(semverKey(name, canon, version))
}

// semverConflict is the error for a version SemVer-equal to a stored one.
func semverConflict(name, version, stored string) error {
	return chartctl.Errorf(chartctl.ECONFLICT,
		"Chart %s version %s already exists, and version %s is the same SemVer version (a leading \"v\" and build metadata after \"+\" do not make a new version). Use a new version number.",
		name, stored, version)
}

// upgradeSemverIndex builds chartSemverBucket from every stored chart
// version. Open runs it when the file has no such bucket (written before
// the index existed); it is idempotent, so an upgrade step of a schema
// version may call it as well. Versions already stored that are
// SemVer-equal to each other are all indexed and all stay readable; only
// new uploads are refused.
func upgradeSemverIndex(tx *bbolt.Tx) error {
	if _, err := tx.CreateBucketIfNotExists([]byte(chartSemverBucket)); err != nil {
		return fmt.Errorf("create bucket %s: %w", chartSemverBucket, err)
	}
	charts := bucket(tx, chartsBucket)
	return charts.ForEachBucket(func(repo []byte) error {
		return charts.Bucket(repo).ForEach(func(k, _ []byte) error {
			name, version, ok := bytes.Cut(k, []byte(sep))
			if !ok {
				return nil
			}
			if err := indexSemver(tx, string(repo), string(name), string(version)); err != nil {
				return fmt.Errorf("index chart %s version %s of repository %s: %w", name, version, repo, err)
			}
			return nil
		})
	})
}
