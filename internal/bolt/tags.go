package bolt

import (
	"bytes"
	"context"
	"fmt"
	"sort"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// tagKey is the key of a version in a repository's bucket of
// chartTagsBucket.
func tagKey(name, version string) []byte { return key(name, chartctl.VersionTag(version)) }

// indexTag adds (name, version) to repo's tag index.
func indexTag(tx *bbolt.Tx, repo, name, version string) error {
	tb, err := bucket(tx, chartTagsBucket).CreateBucketIfNotExists([]byte(repo))
	if err != nil {
		return err
	}
	return tb.Put(tagKey(name, version), []byte(version))
}

// unindexTag removes (name, version) from repo's tag index.
func unindexTag(tx *bbolt.Tx, repo, name, version string) error {
	tb := bucket(tx, chartTagsBucket).Bucket([]byte(repo))
	if tb == nil {
		return nil
	}
	return tb.Delete(tagKey(name, version))
}

// dropTags removes repo's tag index (the repository is deleted, or a new
// one of the name starts empty).
func dropTags(tx *bbolt.Tx, repo string) error {
	tags := bucket(tx, chartTagsBucket)
	if tags.Bucket([]byte(repo)) == nil {
		return nil
	}
	return tags.DeleteBucket([]byte(repo))
}

// upgradeChartTags (9→10) builds chartTagsBucket from every stored chart
// version's key (no record is decoded).
func upgradeChartTags(tx *bbolt.Tx) error {
	if _, err := tx.CreateBucketIfNotExists([]byte(chartTagsBucket)); err != nil {
		return fmt.Errorf("create bucket %s: %w", chartTagsBucket, err)
	}
	charts := bucket(tx, chartsBucket)
	return charts.ForEachBucket(func(repo []byte) error {
		return charts.Bucket(repo).ForEach(func(k, _ []byte) error {
			name, version, ok := bytes.Cut(k, []byte(sep))
			if !ok {
				return nil
			}
			if err := indexTag(tx, string(repo), string(name), string(version)); err != nil {
				return fmt.Errorf("index the tag of chart %s version %s of repository %s: %w", name, version, repo, err)
			}
			return nil
		})
	})
}

// ChartTags returns the OCI tags of chart name's versions in repo in
// lexical order after last, at most n (all when n < 0), and whether more
// follow: one seek in the tag index, then one step per tag.
func (db *DB) ChartTags(ctx context.Context, repo, name, last string, n int) ([]string, bool, error) {
	tags := []string{}
	more := false
	err := db.db.View(func(tx *bbolt.Tx) error {
		if _, err := getRepo(tx, repo); err != nil {
			return err
		}
		tb := bucket(tx, chartTagsBucket).Bucket([]byte(repo))
		if tb == nil {
			return nil
		}
		pfx := prefix(name)
		start := pfx
		if last != "" {
			start = key(name, last)
		}
		c := tb.Cursor()
		for k, _ := c.Seek(start); k != nil && bytes.HasPrefix(k, pfx); k, _ = c.Next() {
			t := string(k[len(pfx):])
			if last != "" && t <= last {
				continue
			}
			if n >= 0 && len(tags) == n {
				more = true
				break
			}
			tags = append(tags, t)
		}
		return nil
	})
	return tags, more, wrap("list chart tags", err)
}

// ChartNames returns every chart holding a version, as repository "/"
// chart, sorted. It skips from one chart name to the next with a seek, so
// a chart's versions are not visited.
func (db *DB) ChartNames(ctx context.Context) ([]string, error) {
	var names []string
	err := db.db.View(func(tx *bbolt.Tx) error {
		// The tag index, not the records: it lists only versions that
		// are not held, so a chart with only held versions is left out.
		charts := bucket(tx, chartTagsBucket)
		return charts.ForEachBucket(func(repo []byte) error {
			for _, name := range distinctFirstParts(charts.Bucket(repo)) {
				names = append(names, string(repo)+"/"+name)
			}
			return nil
		})
	})
	sort.Strings(names)
	return names, wrap("list chart names", err)
}

// distinctFirstParts returns the distinct first parts (before sep) of b's
// keys in key order, seeking past each part's keys instead of visiting
// them: its cost grows with the number of parts, not of keys.
func distinctFirstParts(b *bbolt.Bucket) []string {
	var out []string
	c := b.Cursor()
	for k, _ := c.First(); k != nil; {
		part, _, _ := bytes.Cut(k, []byte(sep))
		out = append(out, string(part))
		// Every key of this part starts with part sep (0x00); part 0x01
		// sorts after all of them and before any longer part.
		k, _ = c.Seek(append(bytes.Clone(part), sep[0]+1))
	}
	return out
}
