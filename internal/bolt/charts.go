package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// PutChartVersion stores cv in repository cv.Repository; its blob (and
// provenance blob, if any) must already be durable. CreatedAt is filled
// when empty.
//
// If the version exists with the same content and cv brings no provenance
// file or the stored one, it returns the stored record (its digest, not
// cv's) and created=false. The same content is the same digest, or the
// same non-empty content digest (the same files in other gzip or tar
// bytes, such as two `helm package` runs); a version stored before content
// digests were recorded has none and is compared by digest only. Same
// digest with a provenance file where the stored version has none: the
// file is attached to the stored record (which keeps its CreatedAt and
// index entry) and the result is created=true. A provenance file with the
// same content in other archive bytes is a conflict: it signs those bytes,
// not the stored ones. If the version exists with other content, or with
// another provenance file, it returns ECONFLICT, unless opts.Overwrite is
// set: then it replaces the record, returns the new one with created=true,
// and orphans lists (sorted) the blobs no record refers to any more. With
// opts.Manifest the version's OCI manifest is stored in the same commit
// (chartctl.PutVersionOptions).
//
// A new version SemVer-equal to a stored version of the same chart
// ("v1.0.0" or "1.0.0+build.7" beside "1.0.0", see canonicalVersion) is
// ECONFLICT naming the stored version, overwrite or not.
//
// It returns ENOTFOUND if the repository does not exist, or if
// cv.RepositoryID is set and differs from the repository's ID (the
// repository the upload was meant for was deleted and its name re-created
// meanwhile), and EINVALID if the name, version or digest is missing.
//
// A call alone commits at once; concurrent calls share one commit (bbolt's
// Batch, which waits up to its delay for company). Each is fsynced before it
// returns.
func (db *DB) PutChartVersion(ctx context.Context, cv *chartctl.ChartVersion, opts chartctl.PutVersionOptions) (*chartctl.ChartVersion, bool, []string, error) {
	overwrite := opts.Overwrite
	if err := validateChartKey(cv.Name, cv.Version); err != nil {
		return nil, false, nil, err
	}
	if cv.Digest == "" {
		return nil, false, nil, chartctl.Invalid("digest", "A chart digest is required.")
	}
	rec := newChartRecord(cv)
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = db.now()
	}
	val, err := encode(rec)
	if err != nil {
		return nil, false, nil, err
	}
	k := key(cv.Name, cv.Version)

	var (
		stored  *chartctl.ChartVersion
		created bool
		orphans []string
	)
	// Batch may run this more than once (when another call in the batch
	// fails), so it sets every result afresh.
	commit := db.db.Update
	if db.puts.Add(1) > 1 {
		commit = db.db.Batch
	}
	defer db.puts.Add(-1)
	put := func(tx *bbolt.Tx) error {
		stored, created, orphans = nil, false, nil
		repo, err := getRepo(tx, cv.Repository)
		if err != nil {
			return err
		}
		if cv.RepositoryID != "" && repo.ID != cv.RepositoryID {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Repository %q was deleted while the chart was being uploaded; nothing was stored.", cv.Repository)
		}
		cb, err := bucket(tx, chartsBucket).CreateBucketIfNotExists([]byte(cv.Repository))
		if err != nil {
			return err
		}
		refs := bucket(tx, blobRefsBucket)

		var old *chartRecord
		if v := cb.Get(k); v != nil {
			if old, err = decode[chartRecord](v); err != nil {
				return err
			}
			switch {
			case old.Digest == rec.Digest:
				switch {
				case rec.ProvDigest == "" || rec.ProvDigest == old.ProvDigest:
					stored = old.domain()
					return db.writeChange(ctx, tx, false)
				case old.ProvDigest == "" || overwrite:
					if err := charge(tx, repo, rec.ProvSize-old.ProvSize, 0); err != nil {
						return err
					}
					if err := deleteOCIChart(tx, cv.Repository, cv.Name, cv.Version); err != nil {
						return err
					}
					stored, orphans, err = replaceProv(cb, refs, k, old, rec.ProvDigest, rec.ProvSize)
					if err != nil {
						return err
					}
					if err := touchIndex(tx, cv.Repository); err != nil {
						return err
					}
					created = true
					return db.writeChange(ctx, tx, true)
				}
				return chartctl.Errorf(chartctl.ECONFLICT, "Chart %s version %s already exists with a different provenance file.", cv.Name, cv.Version)
			case rec.ContentDigest != "" && old.ContentDigest == rec.ContentDigest && rec.ProvDigest == "" && !overwrite:
				// The same files in other gzip or tar bytes.
				stored = old.domain()
				return db.writeChange(ctx, tx, false)
			case rec.ContentDigest != "" && old.ContentDigest == rec.ContentDigest && !overwrite:
				return chartctl.Errorf(chartctl.ECONFLICT, "Chart %s version %s already exists with the same content in a different archive; a provenance file signs the exact archive, so upload the stored archive's provenance file or none.", cv.Name, cv.Version)
			case !overwrite:
				return chartctl.Errorf(chartctl.ECONFLICT, "Chart %s version %s already exists with different content.", cv.Name, cv.Version)
			}
		} else if canon, ok := canonicalVersion(cv.Version); ok {
			if other := semverEqual(bucket(tx, chartSemverBucket).Bucket([]byte(cv.Repository)), cv.Name, canon, cv.Version); other != "" {
				return semverConflict(cv.Name, cv.Version, other)
			}
			if err := indexSemver(tx, cv.Repository, cv.Name, cv.Version); err != nil {
				return err
			}
		}
		dBytes, dVersions := chartBytes(rec), int64(1)
		if old != nil {
			dBytes, dVersions = dBytes-chartBytes(old), 0
		}
		if err := charge(tx, repo, dBytes, dVersions); err != nil {
			return err
		}
		// putIndexEntry below gives the repository a new index
		// generation.
		if err := cb.Put(k, val); err != nil {
			return err
		}
		if old == nil {
			// A new key: the cached order of the repository's keys is
			// out of date (sortedKeys).
			if _, err := cb.NextSequence(); err != nil {
				return err
			}
			// A held version gets its tag at release.
			if rec.HeldUntil == nil {
				if err := indexTag(tx, cv.Repository, cv.Name, cv.Version); err != nil {
					return err
				}
			}
		}
		entry, entryJSON := cv.IndexEntry, cv.IndexEntryJSON
		if rec.HeldUntil != nil {
			// Held: in no index until released (ReleaseChartVersion).
			entry, entryJSON = nil, nil
			if err := hold(tx, cv.Repository, k, *rec.HeldUntil); err != nil {
				return err
			}
			if err := unindexTag(tx, cv.Repository, cv.Name, cv.Version); err != nil {
				return err
			}
		} else if old != nil && old.HeldUntil != nil {
			if err := unhold(tx, cv.Repository, k); err != nil {
				return err
			}
			if err := indexTag(tx, cv.Repository, cv.Name, cv.Version); err != nil {
				return err
			}
		}
		if err := putIndexEntry(tx, cv.Repository, k, rec.CreatedAt, entry, entryJSON); err != nil {
			return err
		}
		// Count the new references before dropping the old ones, so a blob
		// both records share (a provenance file) is never orphaned.
		for _, d := range chartDigests(rec) {
			if err := addRef(refs, d); err != nil {
				return err
			}
		}
		if old != nil {
			// The OCI manifest of the replaced archive no longer describes
			// the version; the derived one takes its place.
			if err := deleteOCIChart(tx, cv.Repository, cv.Name, cv.Version); err != nil {
				return err
			}
			for _, d := range chartDigests(old) {
				gone, err := dropRef(refs, d)
				if err != nil {
					return err
				}
				if gone {
					orphans = append(orphans, d)
				}
			}
		}
		stored, created = rec.domain(), true
		stored.IndexEntry, stored.IndexEntryJSON = cv.IndexEntry, cv.IndexEntryJSON
		return db.writeChange(ctx, tx, true)
	}
	err = commit(func(tx *bbolt.Tx) error {
		if err := put(tx); err != nil || opts.Manifest == nil {
			return err
		}
		m := opts.Manifest
		m.Chart = &chartctl.OCIChartRef{Repository: cv.Repository, Name: stored.Name, Version: stored.Version}
		return db.storeManifest(tx, m, opts.Tag)
	})
	if err != nil {
		return nil, false, nil, wrap("put chart version", err)
	}
	sort.Strings(orphans)
	return stored, created, orphans, nil
}

// replaceProv sets the provenance file of the stored record old (key k)
// to prov, keeping everything else, and returns the new record and the
// blobs no record refers to any more. The caller gives the repository a
// new index generation.
func replaceProv(cb, refs *bbolt.Bucket, k []byte, old *chartRecord, prov string, provSize int64) (*chartctl.ChartVersion, []string, error) {
	rec := *old
	rec.ProvDigest, rec.ProvSize = prov, provSize
	val, err := encode(&rec)
	if err != nil {
		return nil, nil, err
	}
	if err := cb.Put(k, val); err != nil {
		return nil, nil, err
	}
	if err := addRef(refs, prov); err != nil {
		return nil, nil, err
	}
	var orphans []string
	if old.ProvDigest != "" {
		gone, err := dropRef(refs, old.ProvDigest)
		if err != nil {
			return nil, nil, err
		}
		if gone {
			orphans = append(orphans, old.ProvDigest)
		}
	}
	return rec.domain(), orphans, nil
}

// ChartVersion returns one version. It returns ENOTFOUND if the repository
// or the version does not exist.
func (db *DB) ChartVersion(ctx context.Context, repo, name, version string) (*chartctl.ChartVersion, error) {
	var cv *chartctl.ChartVersion
	err := db.db.View(func(tx *bbolt.Tx) error {
		if _, err := getRepo(tx, repo); err != nil {
			return err
		}
		r, err := getChart(tx, repo, name, version)
		if err != nil {
			return err
		}
		cv = withDownloads(tx, r.domain())
		return nil
	})
	return cv, wrap("get chart version", err)
}

// ChartVersions returns the repository's versions matching f, ordered by
// name, then SemVer descending. It returns ENOTFOUND if the repository does
// not exist.
func (db *DB) ChartVersions(ctx context.Context, repo string, f chartctl.ChartFilter) ([]*chartctl.ChartVersion, error) {
	out, _, err := db.ChartVersionPage(ctx, repo, f, 0, -1)
	return out, err
}

// ChartVersionPage returns the versions matching f from offset, at most
// limit of them (all with a negative limit), in ChartVersions order, and how
// many match in all. Ordering works on the keys alone, so only the returned
// records are decoded.
func (db *DB) ChartVersionPage(ctx context.Context, repo string, f chartctl.ChartFilter, offset, limit int) ([]*chartctl.ChartVersion, int, error) {
	var (
		out   []*chartctl.ChartVersion
		total int
	)
	err := db.db.View(func(tx *bbolt.Tx) error {
		rr, err := getRepo(tx, repo)
		if err != nil {
			return err
		}
		cb := bucket(tx, chartsBucket).Bucket([]byte(repo))
		if cb == nil {
			return nil
		}
		// Keys point into the transaction's memory: nothing is copied or
		// decoded until the page is known.
		var keys []versionKey
		collect := func(k, _ []byte) error {
			if vk := db.versionKey(k); f.Version == "" || string(vk.version) == f.Version {
				keys = append(keys, vk)
			}
			return nil
		}
		switch {
		case f.Name == "" && f.Version == "":
			// The whole repository: its keys in order, sorted once per
			// change of its key set.
			keys = db.sortedKeys(rr.ID+"/"+repo, cb)
		case f.Name != "" && f.Version != "":
			k := key(f.Name, f.Version)
			if cb.Get(k) != nil {
				keys = append(keys, db.versionKey(k))
			}
		case f.Name != "":
			err = scanPrefix(cb, prefix(f.Name), collect)
		default:
			err = cb.ForEach(collect)
		}
		if err != nil {
			return err
		}
		if f.Name != "" || f.Version != "" {
			sortVersionKeys(keys)
		}
		if hb := heldKeys(tx, repo); hb != nil && !f.IncludeHeld {
			keys = withoutHeld(keys, hb)
		}
		if f.Latest {
			keys = latestOnly(keys)
		}
		total = len(keys)
		if offset < 0 {
			offset = 0
		}
		if offset >= len(keys) {
			return nil
		}
		keys = keys[offset:]
		if limit >= 0 && limit < len(keys) {
			keys = keys[:limit]
		}
		out = make([]*chartctl.ChartVersion, 0, len(keys))
		for _, k := range keys {
			r, err := decode[chartRecord](cb.Get(k.key))
			if err != nil {
				return err
			}
			out = append(out, withDownloads(tx, r.domain()))
		}
		return nil
	})
	if err != nil {
		return nil, 0, wrap("list chart versions", err)
	}
	return out, total, nil
}

// latestOnly keeps the first (newest) version of each name of a sorted list.
func latestOnly(sorted []versionKey) []versionKey {
	// A new slice: sorted may be the cached order, shared by readers.
	var out []versionKey
	for i, k := range sorted {
		if i == 0 || !bytes.Equal(sorted[i-1].name, k.name) {
			out = append(out, k)
		}
	}
	return out
}

// DeleteChartVersion deletes one version and returns it, with the blob
// digests (sorted) no record refers to any more. It returns ENOTFOUND if
// the repository or the version does not exist.
func (db *DB) DeleteChartVersion(ctx context.Context, repo, name, version string) (*chartctl.ChartVersion, []string, error) {
	return db.deleteChart(ctx, "delete chart version", repo, name, version, nil)
}

// deleteChart deletes one version as DeleteChartVersion does, once check
// (when set) accepts its record; op names the operation in errors.
func (db *DB) deleteChart(ctx context.Context, op, repo, name, version string, check func(*chartRecord) error) (*chartctl.ChartVersion, []string, error) {
	var (
		deleted *chartctl.ChartVersion
		orphans []string
	)
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		rr, err := getRepo(tx, repo)
		if err != nil {
			return err
		}
		r, err := getChart(tx, repo, name, version)
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(r); err != nil {
				return err
			}
		}
		orphans, err = deleteVersion(tx, rr, repo, r)
		if err != nil {
			return err
		}
		deleted = r.domain()
		return nil
	})
	if err != nil {
		return nil, nil, wrap(op, err)
	}
	sort.Strings(orphans)
	return deleted, orphans, nil
}

// deleteVersion deletes the version whose record is r from repository rr
// (named repo) and returns the blob digests no record refers to any more.
func deleteVersion(tx *bbolt.Tx, rr *repoRecord, repo string, r *chartRecord) ([]string, error) {
	name, version := r.Name, r.Version
	var orphans []string
	if err := charge(tx, rr, -chartBytes(r), -1); err != nil {
		return nil, err
	}
	if err := dropDownloads(tx, repo, name, version); err != nil {
		return nil, err
	}
	if ib := bucket(tx, chartIndexBucket).Bucket([]byte(repo)); ib != nil {
		if err := ib.Delete(key(name, version)); err != nil {
			return nil, err
		}
	}
	cb := bucket(tx, chartsBucket).Bucket([]byte(repo))
	if err := cb.Delete(key(name, version)); err != nil {
		return nil, err
	}
	if _, err := cb.NextSequence(); err != nil {
		return nil, err
	}
	if err := touchIndex(tx, repo); err != nil {
		return nil, err
	}
	if err := unindexSemver(tx, repo, name, version); err != nil {
		return nil, err
	}
	if err := unindexTag(tx, repo, name, version); err != nil {
		return nil, err
	}
	if err := deleteOCIChart(tx, repo, name, version); err != nil {
		return nil, err
	}
	refs := bucket(tx, blobRefsBucket)
	for _, d := range chartDigests(r) {
		gone, err := dropRef(refs, d)
		if err != nil {
			return nil, err
		}
		if gone {
			orphans = append(orphans, d)
		}
	}
	if err := unhold(tx, repo, key(name, version)); err != nil {
		return nil, err
	}
	return orphans, nil
}

// BlobReferenced reports whether any chart record refers to the blob
// digest, as its archive or its provenance file, or any OCI repository
// name holds it (pushed, mounted, or referred to by a manifest there).
func (db *DB) BlobReferenced(ctx context.Context, digest string) (bool, error) {
	var ok bool
	err := db.db.View(func(tx *bbolt.Tx) error {
		ok = digest != "" && (refCount(bucket(tx, blobRefsBucket), digest) > 0 || ociBlobLinked(tx, digest))
		return nil
	})
	return ok, wrap("check blob reference", err)
}

// getChart returns a version of a chart in repo, which must exist.
func getChart(tx *bbolt.Tx, repo, name, version string) (*chartRecord, error) {
	var v []byte
	if cb := bucket(tx, chartsBucket).Bucket([]byte(repo)); cb != nil && validateChartKey(name, version) == nil {
		v = cb.Get(key(name, version))
	}
	if v == nil {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "Chart %s version %s not found in repository %q.", name, version, repo)
	}
	return decode[chartRecord](v)
}

// validateChartKey checks that a chart name and version can form a key.
// Whether they are valid for Helm is the caller's concern.
func validateChartKey(name, version string) error {
	if name == "" || strings.Contains(name, sep) {
		return chartctl.Invalid("name", "A chart name is required.")
	}
	if version == "" || strings.Contains(version, sep) {
		return chartctl.Invalid("version", "A chart version is required.")
	}
	return nil
}

// versionKey is a chart record's key split into name and version, with
// the version parsed as SemVer (nil when it is not).
type versionKey struct {
	key, name, version []byte
	sv                 *semver.Version
}

func (db *DB) versionKey(k []byte) versionKey {
	name, version, _ := bytes.Cut(k, []byte(sep))
	return versionKey{key: k, name: name, version: version, sv: db.semver(version)}
}

// sortVersionKeys orders versions by name ascending, then SemVer
// descending; versions that do not parse come last, by descending string.
// The order is total over distinct keys (the last comparison breaks every
// tie), so an unstable sort gives the one result; it moves far fewer
// elements than a stable sort, which dominated listing 10,000 versions.
func sortVersionKeys(keys []versionKey) {
	slices.SortFunc(keys, func(a, b versionKey) int {
		if c := bytes.Compare(a.name, b.name); c != 0 {
			return c
		}
		switch {
		case a.sv != nil && b.sv != nil:
			if c := b.sv.Compare(a.sv); c != 0 {
				return c
			}
		case a.sv != nil:
			return -1
		case b.sv != nil:
			return 1
		}
		return bytes.Compare(b.version, a.version)
	})
}

// semver parses v once and remembers the result (nil when v is not
// SemVer). Looking up a []byte key in the map does not allocate.
func (db *DB) semver(v []byte) *semver.Version {
	db.versionsMu.RLock()
	sv, ok := db.versions[string(v)]
	db.versionsMu.RUnlock()
	if ok {
		return sv
	}
	sv, err := semver.NewVersion(string(v))
	if err != nil {
		sv = nil
	}
	db.versionsMu.Lock()
	db.versions[string(v)] = sv
	db.versionsMu.Unlock()
	return sv
}

// putIndexEntry stores (or, for an empty entry, removes) a version's
// rendered index entry in chartIndexBucket, with its JSON object when
// jsonEntry is not empty (an entry written without one drops the old
// one, which described the old entry).
//
// A value is the creation time (8 bytes, big-endian Unix nanoseconds)
// then either the YAML entry (as every value written before the JSON
// object was kept) or, with a JSON object, a zero byte, the YAML entry's
// length as a uvarint, the YAML entry and the JSON object. A YAML entry
// never starts with a zero byte (YAML allows no NUL), so both read apart
// without a schema upgrade.
func putIndexEntry(tx *bbolt.Tx, repo string, k []byte, created time.Time, entry, jsonEntry []byte) error {
	ib, err := bucket(tx, chartIndexBucket).CreateBucketIfNotExists([]byte(repo))
	if err != nil {
		return err
	}
	if len(entry) == 0 {
		err = ib.Delete(k)
	} else {
		err = ib.Put(k, indexValue(created, entry, jsonEntry))
	}
	if err != nil {
		return err
	}
	return touchIndex(tx, repo)
}

// indexValue encodes a chartIndexBucket value (see putIndexEntry).
func indexValue(created time.Time, entry, jsonEntry []byte) []byte {
	if len(jsonEntry) == 0 {
		v := make([]byte, 8, 8+len(entry))
		binary.BigEndian.PutUint64(v, uint64(created.UnixNano()))
		return append(v, entry...)
	}
	v := make([]byte, 9, 9+binary.MaxVarintLen64+len(entry)+len(jsonEntry))
	binary.BigEndian.PutUint64(v, uint64(created.UnixNano()))
	v = binary.AppendUvarint(v, uint64(len(entry)))
	v = append(v, entry...)
	return append(v, jsonEntry...)
}

// parseIndexValue decodes a chartIndexBucket value into its creation
// time, YAML entry and JSON object (nil when not stored); ok is false for
// a value too short or malformed to hold an entry.
func parseIndexValue(e []byte) (created time.Time, entry, jsonEntry []byte, ok bool) {
	if len(e) <= 8 {
		return time.Time{}, nil, nil, false
	}
	created = time.Unix(0, int64(binary.BigEndian.Uint64(e))).UTC()
	if e[8] != 0 {
		return created, e[8:], nil, true
	}
	n, w := binary.Uvarint(e[9:])
	if w <= 0 || n == 0 || n > uint64(len(e)-9-w) {
		return time.Time{}, nil, nil, false
	}
	rest := e[9+w:]
	return created, rest[:n], rest[n:], true
}

// IndexEntries returns every version of the repository for its Helm index:
// Name, Version, CreatedAt and IndexEntry from the raw entries, without
// decoding records; a version stored without an entry comes as its full
// record, for the caller to render. Returns ENOTFOUND if the repository
// does not exist.
func (db *DB) IndexEntries(ctx context.Context, repo string) ([]*chartctl.ChartVersion, error) {
	var out []*chartctl.ChartVersion
	err := db.db.View(func(tx *bbolt.Tx) error {
		if _, err := getRepo(tx, repo); err != nil {
			return err
		}
		cb := bucket(tx, chartsBucket).Bucket([]byte(repo))
		if cb == nil {
			return nil
		}
		ib := bucket(tx, chartIndexBucket).Bucket([]byte(repo))
		hb := heldKeys(tx, repo)
		// The entries are copied out of the transaction into a few large
		// blocks, not one allocation each: at 100,000 versions that was
		// 200,000 allocations and most of the load's time.
		var arena byteArena
		return cb.ForEach(func(k, v []byte) error {
			if hb != nil && hb.Get(k) != nil {
				return nil
			}
			cv, err := indexVersionIn(&arena, repo, ib, k, v)
			if err != nil {
				return err
			}
			out = append(out, cv)
			return nil
		})
	})
	if err != nil {
		return nil, wrap("list index entries", err)
	}
	return out, nil
}

// IndexEntry returns one version for the Helm index, as IndexEntries
// returns each. Returns ENOTFOUND if the repository or version does not
// exist.
func (db *DB) IndexEntry(ctx context.Context, repo, name, version string) (*chartctl.ChartVersion, error) {
	var out *chartctl.ChartVersion
	err := db.db.View(func(tx *bbolt.Tx) error {
		if _, err := getRepo(tx, repo); err != nil {
			return err
		}
		k := key(name, version)
		var v []byte
		if cb := bucket(tx, chartsBucket).Bucket([]byte(repo)); cb != nil && validateChartKey(name, version) == nil {
			v = cb.Get(k)
		}
		if hb := heldKeys(tx, repo); v == nil || (hb != nil && hb.Get(k) != nil) {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Chart %s version %s not found in repository %q.", name, version, repo)
		}
		var err error
		out, err = indexVersion(repo, bucket(tx, chartIndexBucket).Bucket([]byte(repo)), k, v)
		return err
	})
	if err != nil {
		return nil, wrap("get index entry", err)
	}
	return out, nil
}

// SetIndexEntriesJSON implements chartctl.Store: one transaction for the
// batch, rewriting only the chartIndexBucket values (no change record:
// the JSON entry is derived from the stored YAML entry).
func (db *DB) SetIndexEntriesJSON(ctx context.Context, repo string, cvs []*chartctl.ChartVersion) (int, error) {
	var n int
	err := db.db.Update(func(tx *bbolt.Tx) error {
		n = 0
		if _, err := getRepo(tx, repo); err != nil {
			return err
		}
		ib := bucket(tx, chartIndexBucket).Bucket([]byte(repo))
		if ib == nil {
			return nil
		}
		for _, cv := range cvs {
			if len(cv.IndexEntry) == 0 || len(cv.IndexEntryJSON) == 0 || validateChartKey(cv.Name, cv.Version) != nil {
				continue
			}
			k := key(cv.Name, cv.Version)
			created, entry, _, ok := parseIndexValue(ib.Get(k))
			if !ok || !bytes.Equal(entry, cv.IndexEntry) {
				continue
			}
			if err := ib.Put(k, indexValue(created, entry, cv.IndexEntryJSON)); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, wrap("store JSON index entries", err)
	}
	return n, nil
}

// indexVersion is the version stored under key k (record v) for the Helm
// index: its raw entry from ib when there is one, else its decoded record.
func indexVersion(repo string, ib *bbolt.Bucket, k, v []byte) (*chartctl.ChartVersion, error) {
	return indexVersionIn(nil, repo, ib, k, v)
}

// indexVersionIn is indexVersion copying the entries into arena (nil:
// an allocation each).
func indexVersionIn(arena *byteArena, repo string, ib *bbolt.Bucket, k, v []byte) (*chartctl.ChartVersion, error) {
	if ib != nil {
		if created, entry, jsonEntry, ok := parseIndexValue(ib.Get(k)); ok {
			name, version, _ := strings.Cut(string(k), sep)
			cv := &chartctl.ChartVersion{
				Repository: repo, Name: name, Version: version, CreatedAt: created,
				IndexEntry: arena.copy(entry),
			}
			if len(jsonEntry) > 0 {
				cv.IndexEntryJSON = arena.copy(jsonEntry)
			}
			return cv, nil
		}
	}
	r, err := decode[chartRecord](v)
	if err != nil {
		return nil, err
	}
	return r.domain(), nil
}

// keyCacheMax bounds how many repositories' sorted keys DB keeps.
const keyCacheMax = 64

// sortedRepoKeys is one repository's version keys in ChartVersions order,
// as of one sequence number of its charts bucket.
type sortedRepoKeys struct {
	seq  uint64
	keys []versionKey
}

// sortedKeys returns every version key of the repository id (its ID and
// name: a repository deleted and created again is another one), whose
// charts bucket in the reading transaction is cb, in ChartVersions order.
// Sorting 100,000 versions takes tens of milliseconds, so the order is
// kept per repository and used while the bucket's sequence number (raised
// in the transaction of every version added or deleted) says its key set
// is the one sorted. The keys are copied out of the transaction's memory;
// callers must not modify the slice.
func (db *DB) sortedKeys(id string, cb *bbolt.Bucket) []versionKey {
	seq := cb.Sequence()
	db.keyMu.Lock()
	c := db.keyCache[id]
	db.keyMu.Unlock()
	if c != nil && c.seq == seq {
		return c.keys
	}
	var keys []versionKey
	var arena []byte
	_ = cb.ForEach(func(k, _ []byte) error {
		// One allocation for many keys: a slice of the arena is copied
		// out of the transaction's memory.
		if len(arena)+len(k) > cap(arena) {
			arena = make([]byte, 0, max(64<<10, len(k)))
		}
		start := len(arena)
		arena = append(arena, k...)
		keys = append(keys, db.versionKey(arena[start:len(arena):len(arena)]))
		return nil
	})
	sortVersionKeys(keys)
	db.keyMu.Lock()
	defer db.keyMu.Unlock()
	if db.keyCache == nil {
		db.keyCache = map[string]*sortedRepoKeys{}
	}
	// A reader of an older snapshot does not replace a newer order.
	if c := db.keyCache[id]; c == nil || c.seq < seq {
		if len(db.keyCache) >= keyCacheMax {
			clear(db.keyCache)
		}
		db.keyCache[id] = &sortedRepoKeys{seq: seq, keys: keys}
	}
	return keys
}

// byteArena copies byte slices out of a transaction into shared blocks of
// arenaBlock bytes (larger slices get their own), so that copying many
// small values costs a few allocations. A nil arena allocates each copy.
type byteArena struct{ block []byte }

const arenaBlock = 1 << 20

// copy returns a copy of b whose capacity is its length (an append to it
// cannot write into the next copy).
func (a *byteArena) copy(b []byte) []byte {
	if a == nil || len(b) > arenaBlock/4 {
		return append([]byte(nil), b...)
	}
	if len(b) > cap(a.block)-len(a.block) {
		a.block = make([]byte, 0, arenaBlock)
	}
	n := len(a.block)
	a.block = append(a.block, b...)
	return a.block[n:len(a.block):len(a.block)]
}
