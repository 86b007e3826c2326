package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// chartCols are the columns of a full chart record, as scanChart reads
// them; the index entry is only read by the index methods.
const chartCols = `name, version, app_version, description, keywords, digest, content_digest, size, prov_digest, prov_size, created_at, metadata, verification, held_until, images, policy`

// downloadCols follow chartCols in the reads that show download counters
// (scanChartDownloads).
const downloadCols = `, dl.count, dl.last_at`

// chartColsDownloads are chartCols, qualified, and downloadCols.
var chartColsDownloads = qualified(chartCols) + downloadCols

// downloadsJoin joins chart_versions (unaliased) to its counter, dl.
const downloadsJoin = ` LEFT JOIN downloads dl ON dl.repository_id = chart_versions.repository_id
	AND dl.name = chart_versions.name AND dl.version = chart_versions.version`

func scanChart(repo string, row pgx.Row) (*chartctl.ChartVersion, error) {
	return scanChartRow(repo, row, false)
}

// scanChartDownloads reads chartCols+downloadCols.
func scanChartDownloads(repo string, row pgx.Row) (*chartctl.ChartVersion, error) {
	return scanChartRow(repo, row, true)
}

func scanChartRow(repo string, row pgx.Row, downloads bool) (*chartctl.ChartVersion, error) {
	cv := &chartctl.ChartVersion{Repository: repo}
	var (
		metadata, verification, images, policy []byte
		count                                  *int64
		last                                   *time.Time
	)
	dest := []any{&cv.Name, &cv.Version, &cv.AppVersion, &cv.Description, &cv.Keywords,
		&cv.Digest, &cv.ContentDigest, &cv.Size, &cv.ProvDigest, &cv.ProvSize, &cv.CreatedAt, &metadata, &verification, &cv.HeldUntil, &images, &policy}
	if downloads {
		dest = append(dest, &count, &last)
	}
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	if count != nil {
		cv.Downloads, cv.LastDownloadedAt = *count, utcPtr(last)
	}
	cv.Keywords = nilIfEmpty(cv.Keywords)
	cv.CreatedAt = utc(cv.CreatedAt)
	cv.HeldUntil = utcPtr(cv.HeldUntil)
	if len(metadata) > 0 {
		cv.Metadata = metadata
	}
	var err error
	if cv.Verification, err = decodeVerification(verification); err != nil {
		return nil, err
	}
	if cv.Images, err = decodeImages(images); err != nil {
		return nil, err
	}
	cv.Policy, err = decodeVersionPolicy(policy)
	return cv, err
}

// compactJSON returns the metadata as bolt stores it: compacted JSON, nil
// when empty.
func compactJSON(m json.RawMessage) ([]byte, error) {
	if len(m) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, m); err != nil {
		return nil, chartctl.Invalid("metadata", "The chart metadata is not valid JSON.")
	}
	return buf.Bytes(), nil
}

// chartDigests returns the blob digests a chart record refers to.
func chartDigests(cv *chartctl.ChartVersion) []string {
	if cv.ProvDigest == "" {
		return []string{cv.Digest}
	}
	return []string{cv.Digest, cv.ProvDigest}
}

// PutChartVersion stores cv in repository cv.Repository; its blob (and
// provenance blob, if any) must already be durable. CreatedAt is filled
// when empty. The rules are bolt's:
//
// If the version exists with the same content and cv brings no provenance
// file or the stored one, it returns the stored record (its digest, not
// cv's) and created=false. The same content is the same digest, or the
// same non-empty content digest (the same files in other gzip or tar
// bytes); a version stored without a content digest is compared by digest
// only. Same digest with a provenance file where the stored version has
// none: the file is attached to the stored record (which keeps its
// CreatedAt and index entry) and the result is created=true. A provenance
// file with the same content in other archive bytes is a conflict: it
// signs those bytes, not the stored ones. If the version exists with other
// content, or with another provenance file, it returns ECONFLICT, unless
// opts.Overwrite is set: then it replaces the record, returns the new one
// with created=true, and orphans lists (sorted) the blobs no record refers
// to any more. Replacing a version's archive or provenance file deletes
// the OCI manifest pushed for it; with opts.Manifest the version's OCI
// manifest is stored in the same transaction (chartctl.PutVersionOptions).
//
// A new version SemVer-equal to a stored version of the same chart
// ("v1.0.0" or "1.0.0+build.7" beside "1.0.0") is ECONFLICT naming the
// stored version, overwrite or not.
//
// It returns ENOTFOUND if the repository does not exist, or if
// cv.RepositoryID is set and differs from the repository's ID, and
// EINVALID if the name, version or digest is missing.
//
// Of concurrent calls for one version, or for SemVer-equal versions, on
// any number of replicas, the unique indexes let exactly one insert; the
// others wait for it to commit and then see its row.
func (db *DB) PutChartVersion(ctx context.Context, cv *chartctl.ChartVersion, opts chartctl.PutVersionOptions) (*chartctl.ChartVersion, bool, []string, error) {
	overwrite := opts.Overwrite
	if cv.Name == "" || !storable(cv.Name) {
		return nil, false, nil, chartctl.Invalid("name", "A chart name is required.")
	}
	if cv.Version == "" || !storable(cv.Version) {
		return nil, false, nil, chartctl.Invalid("version", "A chart version is required.")
	}
	if cv.Digest == "" || !storable(cv.Digest, cv.ProvDigest, cv.ContentDigest) {
		return nil, false, nil, chartctl.Invalid("digest", "A chart digest is required.")
	}
	rec := *cv
	rec.RepositoryID = ""
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = db.now()
	}
	rec.CreatedAt = rec.CreatedAt.UTC().Truncate(time.Microsecond)
	metadata, err := compactJSON(cv.Metadata)
	if err != nil {
		return nil, false, nil, err
	}
	rec.Metadata, rec.Keywords = metadata, nilIfEmpty(texts(cv.Keywords))
	rec.AppVersion, rec.Description = text(cv.AppVersion), text(cv.Description)
	var entry, entryJSON []byte
	if len(cv.IndexEntry) > 0 {
		entry = cv.IndexEntry
		// The JSON object is only ever stored with the entry it converts.
		if len(cv.IndexEntryJSON) > 0 {
			entryJSON = cv.IndexEntryJSON
		}
	}
	verification, err := encodeVerification(cv.Verification)
	if err != nil {
		return nil, false, nil, err
	}
	images, err := encodeImages(cv.Images)
	if err != nil {
		return nil, false, nil, err
	}
	policy, err := encodeVersionPolicy(cv.Policy)
	if err != nil {
		return nil, false, nil, err
	}
	canon := canonicalOrNil(cv.Version)
	if rec.HeldUntil != nil {
		// Held: in no index until released (ReleaseChartVersion).
		entry = nil
		h := rec.HeldUntil.UTC().Truncate(time.Microsecond)
		rec.HeldUntil = &h
	}

	// The OCI manifest the version was pushed with, stored in the same
	// transaction: with a new version in the round trip that stores it
	// (manifestStored), else after the version's writes (storeManifest).
	m := opts.Manifest
	if m != nil {
		if err := storableManifest(m, opts.Tag); err != nil {
			return nil, false, nil, err
		}
		m.Chart = &chartctl.OCIChartRef{Repository: cv.Repository, Name: rec.Name, Version: rec.Version}
	}
	var (
		stored         *chartctl.ChartVersion
		created        bool
		orphans        []string
		manifestStored bool
	)
	put := func(tx pgx.Tx) error {
		stored, created, orphans = nil, false, nil
		if !storable(cv.Repository) {
			return repoNotFound(cv.Repository)
		}
		// The repository (locked), the stored version (locked) and a
		// SemVer-equal one, in one round trip. The versions are found
		// through the repository's name, so each is checked to be of the
		// row the first statement locked.
		b := &pgx.Batch{}
		b.Queue(`SELECT id, name, COALESCE(organization, ''), proxy IS NOT NULL FROM repositories WHERE name = $1 FOR KEY SHARE`, cv.Repository)
		b.Queue(`SELECT repository_id, `+chartCols+` FROM chart_versions
			WHERE repository_id = (SELECT id FROM repositories WHERE name = $1) AND name = $2 AND version = $3 FOR UPDATE`,
			cv.Repository, rec.Name, rec.Version)
		if canon != nil {
			b.Queue(`SELECT version FROM chart_versions
				WHERE repository_id = (SELECT id FROM repositories WHERE name = $1) AND name = $2 AND canonical_version = $3 AND version <> $4
				LIMIT 1`, cv.Repository, rec.Name, *canon, rec.Version)
		}
		if m != nil {
			// What storing the manifest reads, for a new version
			// (storeManifest reads it again after any other write).
			queueManifestState(b, m)
		}
		var (
			id, repoName, org, oldRepo, other string
			proxy                             bool
		)
		res := tx.SendBatch(ctx, b)
		err := res.QueryRow().Scan(&id, &repoName, &org, &proxy)
		if errors.Is(err, pgx.ErrNoRows) {
			_ = res.Close()
			return repoNotFound(cv.Repository)
		} else if err != nil {
			_ = res.Close()
			return err
		}
		old, err := scanChartRow(cv.Repository, prefixedRow{res.QueryRow(), &oldRepo}, false)
		if errors.Is(err, pgx.ErrNoRows) {
			old = nil
		} else if err != nil {
			_ = res.Close()
			return err
		}
		if canon != nil {
			if err := res.QueryRow().Scan(&other); err != nil && !errors.Is(err, pgx.ErrNoRows) {
				_ = res.Close()
				return err
			}
		}
		var manifest manifestState
		if m != nil {
			if manifest, err = readManifestState(res, m); err != nil {
				_ = res.Close()
				return err
			}
		}
		if err := res.Close(); err != nil {
			return err
		}
		if old != nil && oldRepo != id {
			return errRetry // the name went to another repository between the statements
		}
		if cv.RepositoryID != "" && id != cv.RepositoryID {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Repository %q was deleted while the chart was being uploaded; nothing was stored.", cv.Repository)
		}
		scopes := chargedScopes(repoName, org, proxy)
		if old == nil {
			if other != "" {
				return semverConflict(cv.Name, cv.Version, other)
			}
			if manifest.unknown != nil {
				return manifest.unknown
			}
			// The version, its blobs' references, its usage, the index's
			// change, its manifest and the change's entries and events in
			// one round trip.
			digests, counts, _ := refArgs(refDelta(chartDigests(&rec), nil))
			b := &pgx.Batch{}
			b.Queue(`INSERT INTO chart_versions
				(repository_id, name, version, app_version, description, keywords, digest, content_digest, size, prov_digest,
				 created_at, metadata, index_entry, canonical_version, prov_size, verification, held_until, images, policy, index_entry_json)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
				id, rec.Name, rec.Version, rec.AppVersion, rec.Description, rec.Keywords, rec.Digest, rec.ContentDigest,
				rec.Size, rec.ProvDigest, rec.CreatedAt, metadata, entry, canon, rec.ProvSize, verification, rec.HeldUntil, images, policy, entryJSON)
			if len(digests) > 0 {
				b.Queue(addRefsSQL, digests, counts)
			}
			charge := queueCharge(b, scopes, rec.Size+rec.ProvSize, 1)
			if err := db.queueChanged(b, id, cv.Repository, rec.Name, rec.Version); err != nil {
				return err
			}
			writes := b.Len()
			if m != nil {
				if err := db.queueManifestWrites(b, m, opts.Tag, manifest); err != nil {
					return err
				}
			}
			writes = b.Len() - writes
			err := db.writeChangeAfter(ctx, tx, true, b, func(res pgx.BatchResults) error {
				_, err := res.Exec()
				if isUnique(err, "chart_versions_pkey") || isUnique(err, "chart_versions_canonical") {
					// A concurrent upload of this version, or of a
					// SemVer-equal one, committed first: decide again,
					// seeing its row.
					return errRetry
				} else if err != nil {
					return err
				}
				if len(digests) > 0 {
					if _, err := res.Exec(); err != nil {
						return err
					}
				}
				if err := charge.read(res); err != nil {
					return err
				}
				if err := scanChanged(res.QueryRow(), cv.Repository); err != nil {
					return err
				}
				return readManifestWrites(res, writes)
			})
			if err != nil {
				return err
			}
			if err := charge.check(ctx, tx); err != nil {
				return err
			}
			stored, created, manifestStored = &rec, true, true
			return nil
		}

		sameContent := rec.ContentDigest != "" && old.ContentDigest == rec.ContentDigest
		switch {
		case old.Digest == rec.Digest:
			switch {
			case rec.ProvDigest == "" || rec.ProvDigest == old.ProvDigest:
				stored = old
				return db.writeChange(ctx, tx, false)
			case old.ProvDigest == "" || overwrite:
				if err := deleteOCIChart(ctx, tx, cv.Repository, rec.Name, rec.Version); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, `UPDATE chart_versions SET prov_digest = $4, prov_size = $5
					WHERE repository_id = $1 AND name = $2 AND version = $3`, id, rec.Name, rec.Version, rec.ProvDigest, rec.ProvSize); err != nil {
					return err
				}
				var gone []string
				if old.ProvDigest != "" {
					gone = []string{old.ProvDigest}
				}
				if orphans, err = adjustRefs(ctx, tx, refDelta([]string{rec.ProvDigest}, gone)); err != nil {
					return err
				}
				if err := chargeScopes(ctx, tx, scopes, rec.ProvSize-old.ProvSize, 0); err != nil {
					return err
				}
				old.ProvDigest, old.ProvSize = rec.ProvDigest, rec.ProvSize
				stored, created = old, true
				return db.changedWithChange(ctx, tx, id, cv.Repository, rec.Name, rec.Version)
			}
			return chartctl.Errorf(chartctl.ECONFLICT, "Chart %s version %s already exists with a different provenance file.", cv.Name, cv.Version)
		case sameContent && rec.ProvDigest == "" && !overwrite:
			// The same files in other gzip or tar bytes.
			stored = old
			return db.writeChange(ctx, tx, false)
		case sameContent && !overwrite:
			return chartctl.Errorf(chartctl.ECONFLICT, "Chart %s version %s already exists with the same content in a different archive; a provenance file signs the exact archive, so upload the stored archive's provenance file or none.", cv.Name, cv.Version)
		case !overwrite:
			return chartctl.Errorf(chartctl.ECONFLICT, "Chart %s version %s already exists with different content.", cv.Name, cv.Version)
		}
		if _, err := tx.Exec(ctx, `UPDATE chart_versions SET
			app_version = $4, description = $5, keywords = $6, digest = $7, content_digest = $8, size = $9, prov_digest = $10,
			created_at = $11, metadata = $12, index_entry = $13, prov_size = $14, verification = $15, held_until = $16, images = $17, policy = $18,
			index_entry_json = $19
			WHERE repository_id = $1 AND name = $2 AND version = $3`,
			id, rec.Name, rec.Version, rec.AppVersion, rec.Description, rec.Keywords, rec.Digest, rec.ContentDigest, rec.Size,
			rec.ProvDigest, rec.CreatedAt, metadata, entry, rec.ProvSize, verification, rec.HeldUntil, images, policy, entryJSON); err != nil {
			return err
		}
		// The OCI manifest of the replaced archive no longer describes the
		// version.
		if err := deleteOCIChart(ctx, tx, cv.Repository, rec.Name, rec.Version); err != nil {
			return err
		}
		if orphans, err = adjustRefs(ctx, tx, refDelta(chartDigests(&rec), chartDigests(old))); err != nil {
			return err
		}
		if err := chargeScopes(ctx, tx, scopes, rec.Size+rec.ProvSize-old.Size-old.ProvSize, 0); err != nil {
			return err
		}
		stored, created = &rec, true
		return db.changedWithChange(ctx, tx, id, cv.Repository, rec.Name, rec.Version)
	}
	err = db.tx(ctx, "put chart version", func(tx pgx.Tx) error {
		manifestStored = false
		if err := put(tx); err != nil || m == nil || manifestStored {
			return err
		}
		return db.storeManifest(ctx, tx, m, opts.Tag)
	})
	if err != nil {
		return nil, false, nil, err
	}
	sort.Strings(orphans)
	return stored, created, orphans, nil
}

// prefixedRow is a row whose first column goes to first and the others to
// the destinations its Scan is given.
type prefixedRow struct {
	row   pgx.Row
	first any
}

func (r prefixedRow) Scan(dest ...any) error {
	return r.row.Scan(append([]any{r.first}, dest...)...)
}

// errRetry asks tx to run a transaction again: a row it depended on
// changed between two statements.
var errRetry = errors.New("postgres: record changed during the transaction; retrying")

// refDelta counts one more reference to each of add and one less to each
// of drop.
func refDelta(add, drop []string) map[string]int64 {
	d := map[string]int64{}
	for _, a := range add {
		d[a]++
	}
	for _, x := range drop {
		d[x]--
	}
	return d
}

// adjustRefs applies delta to the blob reference counts and returns the
// digests left without a reference. Rows are locked in digest order, so
// concurrent writers touching the same blobs queue instead of deadlocking,
// and the count each sees is exact: a blob is reported orphaned by exactly
// one transaction.
func adjustRefs(ctx context.Context, tx pgx.Tx, delta map[string]int64) ([]string, error) {
	digests, counts, dropped := refArgs(delta)
	if len(digests) == 0 {
		return nil, nil
	}
	if _, err := tx.Exec(ctx, addRefsSQL, digests, counts); err != nil {
		return nil, err
	}
	if !dropped {
		return nil, nil
	}
	rows, err := tx.Query(ctx, `DELETE FROM blob_refs WHERE digest = ANY($1) AND refs <= 0 RETURNING digest`, digests)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// addRefsSQL adds counts ($2) to the references of digests ($1), in
// digest order.
const addRefsSQL = `INSERT INTO blob_refs AS b (digest, refs)
	SELECT d, n FROM unnest($1::text[], $2::bigint[]) AS u(d, n) ORDER BY d
	ON CONFLICT (digest) DO UPDATE SET refs = b.refs + EXCLUDED.refs`

// refArgs returns the digests delta changes, sorted, their changes, and
// whether any count drops.
func refArgs(delta map[string]int64) (digests []string, counts []int64, dropped bool) {
	for d, n := range delta {
		if n != 0 {
			digests = append(digests, d)
		}
	}
	sort.Strings(digests)
	counts = make([]int64, len(digests))
	for i, d := range digests {
		counts[i] = delta[d]
		dropped = dropped || counts[i] < 0
	}
	return digests, counts, dropped
}

// ChartVersion returns one version. It returns ENOTFOUND if the repository
// or the version does not exist.
func (db *DB) ChartVersion(ctx context.Context, repo, name, version string) (*chartctl.ChartVersion, error) {
	if !storable(repo, name, version) {
		return nil, db.missing(ctx, repo, chartNotFound(repo, name, version))
	}
	cv, err := scanChartDownloads(repo, db.pool.QueryRow(ctx, `SELECT `+chartColsDownloads+` FROM chart_versions`+downloadsJoin+`
		WHERE chart_versions.repository_id = (SELECT id FROM repositories WHERE name = $1)
		AND chart_versions.name = $2 AND chart_versions.version = $3`, repo, name, version))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, db.missing(ctx, repo, chartNotFound(repo, name, version))
	}
	return cv, db.wrap("get chart version", err)
}

// missing returns ENOTFOUND for the repository when it does not exist,
// and notFound when it does: the error of a lookup inside a repository
// that found nothing.
func (db *DB) missing(ctx context.Context, repo string, notFound error) error {
	if _, err := repoID(ctx, db.pool, repo); err != nil {
		return db.wrap("get repository", err)
	}
	return notFound
}

func chartNotFound(repo, name, version string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Chart %s version %s not found in repository %q.", name, version, repo)
}

// ChartVersions returns the repository's versions matching f, ordered by
// name, then SemVer descending. It returns ENOTFOUND if the repository does
// not exist.
func (db *DB) ChartVersions(ctx context.Context, repo string, f chartctl.ChartFilter) ([]*chartctl.ChartVersion, error) {
	out, _, err := db.ChartVersionPage(ctx, repo, f, 0, -1)
	return out, err
}

// versionKey is a version's name and version, with the version parsed as
// SemVer (nil when it is not).
type versionKey struct {
	name, version string
	sv            *semver.Version
}

// ChartVersionPage returns the versions matching f from offset, at most
// limit of them (all with a negative limit), in ChartVersions order, and
// how many match in all. SemVer order is decided in Go, with the library
// bolt uses, on the keys alone; then only the page's records are read, in
// the same snapshot.
func (db *DB) ChartVersionPage(ctx context.Context, repo string, f chartctl.ChartFilter, offset, limit int) ([]*chartctl.ChartVersion, int, error) {
	var (
		out   []*chartctl.ChartVersion
		total int
	)
	err := db.readTx(ctx, "list chart versions", func(tx pgx.Tx) error {
		out, total = nil, 0
		if !storable(repo) {
			return repoNotFound(repo)
		}
		var (
			id  string
			gen int64
		)
		err := tx.QueryRow(ctx, `SELECT id, generation FROM repositories WHERE name = $1`, repo).Scan(&id, &gen)
		if errors.Is(err, pgx.ErrNoRows) {
			return repoNotFound(repo)
		} else if err != nil || !storable(f.Name, f.Version) {
			return err // a filter no version can match: none
		}
		keys, err := db.sortedKeys(ctx, tx, id, gen)
		if err != nil {
			return err
		}
		if f.Name != "" || f.Version != "" {
			var match []versionKey
			for _, k := range keys {
				if (f.Name == "" || k.name == f.Name) && (f.Version == "" || k.version == f.Version) {
					match = append(match, k)
				}
			}
			keys = match
		}
		if !f.IncludeHeld {
			if keys, err = withoutHeld(ctx, tx, id, keys); err != nil {
				return err
			}
		}
		if f.Latest {
			keys = latestOnly(slices.Clone(keys))
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
		if len(keys) == 0 {
			return nil
		}
		names, versions := make([]string, len(keys)), make([]string, len(keys))
		for i, k := range keys {
			names[i], versions[i] = k.name, k.version
		}
		rows, err := tx.Query(ctx, `SELECT `+chartColsDownloads+` FROM chart_versions
			JOIN unnest($2::text[], $3::text[]) WITH ORDINALITY AS k(n, v, i)
				ON chart_versions.name = k.n AND chart_versions.version = k.v`+downloadsJoin+`
			WHERE chart_versions.repository_id = $1 ORDER BY k.i`, id, names, versions)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.ChartVersion, error) { return scanChartDownloads(repo, r) })
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// keyCacheMax bounds how many repositories' sorted keys DB keeps.
const keyCacheMax = 64

// repoKeys are a repository's version keys in ChartVersions order, as of
// one generation of the repository.
type repoKeys struct {
	gen  int64
	keys []versionKey
}

// sortedKeys returns every version key of repository id in ChartVersions
// order, as of generation gen, which tx's snapshot shows. Sorting 100,000
// keys costs about a tenth of a second, so the result is kept until the
// repository's generation moves (every committed change of its versions
// raises it, on any replica); the slice is shared and must not be
// modified.
func (db *DB) sortedKeys(ctx context.Context, tx pgx.Tx, id string, gen int64) ([]versionKey, error) {
	db.keysMu.Lock()
	c := db.keyCache[id]
	db.keysMu.Unlock()
	if c != nil && c.gen == gen {
		return c.keys, nil
	}
	rows, err := tx.Query(ctx, `SELECT name, version FROM chart_versions WHERE repository_id = $1`, id)
	if err != nil {
		return nil, err
	}
	var keys []versionKey
	var name, version string
	if _, err := pgx.ForEachRow(rows, []any{&name, &version}, func() error {
		keys = append(keys, versionKey{name: name, version: version, sv: db.semver(version)})
		return nil
	}); err != nil {
		return nil, err
	}
	sortVersionKeys(keys)
	db.keysMu.Lock()
	if c := db.keyCache[id]; c == nil || c.gen < gen {
		if len(db.keyCache) >= keyCacheMax {
			clear(db.keyCache)
		}
		db.keyCache[id] = &repoKeys{gen: gen, keys: keys}
	}
	db.keysMu.Unlock()
	return keys, nil
}

// sortVersionKeys orders versions by name ascending (bytewise), then
// SemVer descending; versions that do not parse come last, by descending
// string. It is bolt's order.
func sortVersionKeys(keys []versionKey) {
	slices.SortStableFunc(keys, func(a, b versionKey) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
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
		return strings.Compare(b.version, a.version)
	})
}

// latestOnly keeps the first (newest) version of each name of a sorted
// list.
func latestOnly(sorted []versionKey) []versionKey {
	out := sorted[:0]
	for i, k := range sorted {
		if i == 0 || sorted[i-1].name != k.name {
			out = append(out, k)
		}
	}
	return out
}

// semver parses v once and remembers the result (nil when v is not
// SemVer).
func (db *DB) semver(v string) *semver.Version {
	db.versionsMu.RLock()
	sv, ok := db.versions[v]
	db.versionsMu.RUnlock()
	if ok {
		return sv
	}
	sv, err := semver.NewVersion(v)
	if err != nil {
		sv = nil
	}
	db.versionsMu.Lock()
	db.versions[v] = sv
	db.versionsMu.Unlock()
	return sv
}

// dropDeletedVersion finishes, inside tx, the deletion of chart version
// deleted (already removed from chart_versions) of repository repo (its
// id): its OCI tags and manifests, the references to its blobs, its quota
// usage and the index's change record. It returns the blob digests no
// record refers to any more.
func (db *DB) dropDeletedVersion(ctx context.Context, tx pgx.Tx, id, repo string, deleted *chartctl.ChartVersion) ([]string, error) {
	if err := deleteOCIChart(ctx, tx, repo, deleted.Name, deleted.Version); err != nil {
		return nil, err
	}
	orphans, err := adjustRefs(ctx, tx, refDelta(nil, chartDigests(deleted)))
	if err != nil {
		return nil, err
	}
	if err := charge(ctx, tx, id, -deleted.Size-deleted.ProvSize, -1); err != nil {
		return nil, err
	}
	return orphans, db.changedWithChange(ctx, tx, id, repo, deleted.Name, deleted.Version)
}

// DeleteChartVersion deletes one version and returns it, with the blob
// digests (sorted) no record refers to any more. It returns ENOTFOUND if
// the repository or the version does not exist.
func (db *DB) DeleteChartVersion(ctx context.Context, repo, name, version string) (*chartctl.ChartVersion, []string, error) {
	var (
		deleted *chartctl.ChartVersion
		orphans []string
	)
	err := db.tx(ctx, "delete chart version", func(tx pgx.Tx) error {
		deleted, orphans = nil, nil
		id, err := lockRepo(ctx, tx, repo, false)
		if err != nil {
			return err
		}
		if !storable(name, version) {
			return chartNotFound(repo, name, version)
		}
		deleted, err = scanChart(repo, tx.QueryRow(ctx, `DELETE FROM chart_versions
			WHERE repository_id = $1 AND name = $2 AND version = $3 RETURNING `+chartCols, id, name, version))
		if errors.Is(err, pgx.ErrNoRows) {
			return chartNotFound(repo, name, version)
		} else if err != nil {
			return err
		}
		orphans, err = db.dropDeletedVersion(ctx, tx, id, repo, deleted)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(orphans)
	return deleted, orphans, nil
}

// BlobReferenced reports whether any chart record refers to the blob
// digest, as its archive or its provenance file, or any OCI repository
// name holds it (pushed, mounted, or referred to by a manifest there).
func (db *DB) BlobReferenced(ctx context.Context, digest string) (bool, error) {
	if digest == "" || !storable(digest) {
		return false, nil
	}
	var ok bool
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM blob_refs WHERE digest = $1)
		OR EXISTS (SELECT 1 FROM oci_blob_links WHERE digest = $1)`, digest).Scan(&ok)
	return ok, db.wrap("check blob reference", err)
}

// indexCols are the columns of a version for the Helm index: its entry,
// and the full record only where there is no entry.
const indexCols = `name, version, created_at, index_entry, index_entry_json,
	CASE WHEN index_entry IS NULL THEN app_version END,
	CASE WHEN index_entry IS NULL THEN description END,
	CASE WHEN index_entry IS NULL THEN keywords END,
	CASE WHEN index_entry IS NULL THEN digest END,
	CASE WHEN index_entry IS NULL THEN size END,
	CASE WHEN index_entry IS NULL THEN prov_digest END,
	CASE WHEN index_entry IS NULL THEN metadata END`

func scanIndexVersion(repo string, row pgx.Row) (*chartctl.ChartVersion, error) {
	cv := &chartctl.ChartVersion{Repository: repo}
	var (
		appVersion, description, digest, prov *string
		size                                  *int64
		metadata                              []byte
	)
	if err := row.Scan(&cv.Name, &cv.Version, &cv.CreatedAt, &cv.IndexEntry, &cv.IndexEntryJSON,
		&appVersion, &description, &cv.Keywords, &digest, &size, &prov, &metadata); err != nil {
		return nil, err
	}
	cv.CreatedAt = utc(cv.CreatedAt)
	if len(cv.IndexEntry) > 0 {
		if len(cv.IndexEntryJSON) == 0 {
			cv.IndexEntryJSON = nil
		}
		return cv, nil
	}
	cv.IndexEntry, cv.IndexEntryJSON = nil, nil
	cv.Keywords = nilIfEmpty(cv.Keywords)
	for _, f := range []struct {
		dst *string
		src *string
	}{{&cv.AppVersion, appVersion}, {&cv.Description, description}, {&cv.Digest, digest}, {&cv.ProvDigest, prov}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	if size != nil {
		cv.Size = *size
	}
	if len(metadata) > 0 {
		cv.Metadata = metadata
	}
	return cv, nil
}

// IndexEntries returns every version of the repository for its Helm index:
// Name, Version, CreatedAt and IndexEntry; a version stored without an
// entry comes as its full record, for the caller to render. Returns
// ENOTFOUND if the repository does not exist.
func (db *DB) IndexEntries(ctx context.Context, repo string) ([]*chartctl.ChartVersion, error) {
	var out []*chartctl.ChartVersion
	err := db.readTx(ctx, "list index entries", func(tx pgx.Tx) error {
		id, err := repoID(ctx, tx, repo)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+indexCols+` FROM chart_versions WHERE repository_id = $1 AND held_until IS NULL`, id)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.ChartVersion, error) { return scanIndexVersion(repo, r) })
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// IndexEntry returns one version for the Helm index, as IndexEntries
// returns each. Returns ENOTFOUND if the repository or version does not
// exist.
func (db *DB) IndexEntry(ctx context.Context, repo, name, version string) (*chartctl.ChartVersion, error) {
	if !storable(repo, name, version) {
		return nil, db.missing(ctx, repo, chartNotFound(repo, name, version))
	}
	cv, err := scanIndexVersion(repo, db.pool.QueryRow(ctx, `SELECT `+indexCols+` FROM chart_versions
		WHERE repository_id = (SELECT id FROM repositories WHERE name = $1) AND name = $2 AND version = $3
		AND held_until IS NULL`, repo, name, version))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, db.missing(ctx, repo, chartNotFound(repo, name, version))
	}
	return cv, db.wrap("get index entry", err)
}

// SetIndexEntriesJSON implements chartctl.Store: one UPDATE for the
// batch, matching each row on its stored entry, and no generation bump
// (the JSON entry is derived from the stored YAML entry: no served byte
// changes).
func (db *DB) SetIndexEntriesJSON(ctx context.Context, repo string, cvs []*chartctl.ChartVersion) (int, error) {
	var names, versions []string
	var entries, jsons [][]byte
	for _, cv := range cvs {
		if len(cv.IndexEntry) == 0 || len(cv.IndexEntryJSON) == 0 || !storable(repo, cv.Name, cv.Version) {
			continue
		}
		names, versions = append(names, cv.Name), append(versions, cv.Version)
		entries, jsons = append(entries, cv.IndexEntry), append(jsons, cv.IndexEntryJSON)
	}
	var n int
	err := db.tx(ctx, "store JSON index entries", func(tx pgx.Tx) error {
		id, err := repoID(ctx, tx, repo)
		if err != nil || len(names) == 0 {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE chart_versions c SET index_entry_json = u.j
			FROM unnest($2::text[], $3::text[], $4::bytea[], $5::bytea[]) AS u(n, v, e, j)
			WHERE c.repository_id = $1 AND c.name = u.n AND c.version = u.v AND c.index_entry = u.e
			AND c.held_until IS NULL`, id, names, versions, entries, jsons)
		n = int(tag.RowsAffected())
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// qualified prefixes each of the comma-separated columns with
// "chart_versions.", for queries that join tables with the same column
// names.
func qualified(cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = "chart_versions." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
