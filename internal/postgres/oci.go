package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/epochmemo"
)

// This file is the OCI registry's metadata (chartctl.OCIStore, CONTRACT
// §11) on PostgreSQL, with bolt's behaviour: manifests with their bytes,
// tags, the referrers index (a column of the manifest), blob links per
// repository name and upload sessions.

// LinkBlob records that name holds the blob digest of size bytes,
// refreshing LinkedAt if it was linked.
func (db *DB) LinkBlob(ctx context.Context, name, digest string, size int64) error {
	return db.LinkBlobs(ctx, []chartctl.OCIBlobLink{{Name: name, Digest: digest, Size: size}})
}

// LinkBlobs links each of links, in one statement.
func (db *DB) LinkBlobs(ctx context.Context, links []chartctl.OCIBlobLink) error {
	names, digests, sizes := make([]string, 0, len(links)), make([]string, 0, len(links)), make([]int64, 0, len(links))
	seen := map[[2]string]int{}
	for _, l := range links {
		if !storable(l.Name, l.Digest) {
			return chartctl.Invalid("name", "Invalid repository name or digest.")
		}
		// One row per link: an INSERT may not update a row twice.
		if i, ok := seen[[2]string{l.Name, l.Digest}]; ok {
			sizes[i] = l.Size
			continue
		}
		seen[[2]string{l.Name, l.Digest}] = len(names)
		names, digests, sizes = append(names, l.Name), append(digests, l.Digest), append(sizes, l.Size)
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO oci_blob_links (name, digest, size, linked_at)
		SELECT name, digest, size, $4 FROM unnest($1::text[], $2::text[], $3::bigint[]) AS l (name, digest, size)
		ON CONFLICT (name, digest) DO UPDATE SET size = EXCLUDED.size, linked_at = EXCLUDED.linked_at`,
		names, digests, sizes, db.now())
	db.wrote(ctx)
	return db.wrap("link blobs", err)
}

// BlobLink returns the link of digest in name, or ENOTFOUND.
func (db *DB) BlobLink(ctx context.Context, name, digest string) (*chartctl.OCIBlobLink, error) {
	if !storable(name, digest) {
		return nil, blobUnknown()
	}
	return remember(ctx, db, db.memos.links, epochmemo.NameKey{Name: name, Ref: digest}, func() (*chartctl.OCIBlobLink, error) {
		l := &chartctl.OCIBlobLink{Name: strings.Clone(name), Digest: strings.Clone(digest)}
		err := db.pool.QueryRow(ctx, `SELECT size, linked_at FROM oci_blob_links WHERE name = $1 AND digest = $2`,
			name, digest).Scan(&l.Size, &l.LinkedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, blobUnknown()
		} else if err != nil {
			return nil, db.wrap("get blob link", err)
		}
		l.LinkedAt = utc(l.LinkedAt)
		return l, nil
	})
}

// BlobNames returns the names that hold digest, sorted.
func (db *DB) BlobNames(ctx context.Context, digest string) ([]string, error) {
	if !storable(digest) {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT name FROM oci_blob_links WHERE digest = $1 ORDER BY name`, digest)
	if err != nil {
		return nil, db.wrap("list blob names", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return nilIfEmpty(names), db.wrap("list blob names", err)
}

// UnlinkBlob removes digest from name, or returns ENOTFOUND if it was not
// linked there.
func (db *DB) UnlinkBlob(ctx context.Context, name, digest string) error {
	if !storable(name, digest) {
		return blobUnknown()
	}
	return db.mutate(ctx, "unlink blob", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM oci_blob_links WHERE name = $1 AND digest = $2`, name, digest)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return blobUnknown()
		}
		return nil
	})
}

// UnreferencedLinks returns the blob links older than before that no
// manifest of their name refers to.
func (db *DB) UnreferencedLinks(ctx context.Context, before time.Time) ([]*chartctl.OCIBlobLink, error) {
	rows, err := db.pool.Query(ctx, `SELECT l.name, l.digest, l.size, l.linked_at FROM oci_blob_links l
		WHERE l.linked_at < $1
		AND NOT EXISTS (SELECT 1 FROM oci_manifest_blobs b WHERE b.name = l.name AND b.blob = l.digest)
		ORDER BY l.name, l.digest`, before.UTC())
	if err != nil {
		return nil, db.wrap("list unreferenced blobs", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.OCIBlobLink, error) {
		var l chartctl.OCIBlobLink
		if err := r.Scan(&l.Name, &l.Digest, &l.Size, &l.LinkedAt); err != nil {
			return nil, err
		}
		l.LinkedAt = utc(l.LinkedAt)
		return &l, nil
	})
	return out, db.wrap("list unreferenced blobs", err)
}

// PutManifest stores m and points tag at it, in one transaction. The
// blobs and manifests m refers to must be present in m.Name
// (*chartctl.UnknownReferenceError otherwise); storing a digest again
// keeps the first record and only moves the tag; a chart manifest
// replaces the one stored for the same version.
func (db *DB) PutManifest(ctx context.Context, m *chartctl.OCIManifest, tag string) error {
	return db.mutate(ctx, "put manifest", func(tx pgx.Tx) error { return db.storeManifest(ctx, tx, m, tag) })
}

// storeManifest is PutManifest in tx.
func (db *DB) storeManifest(ctx context.Context, tx pgx.Tx, m *chartctl.OCIManifest, tag string) error {
	if err := storableManifest(m, tag); err != nil {
		return err
	}
	// Lock the links and manifests referred to, so that none goes away
	// before this commits, and read whether the manifest is stored, in
	// one round trip.
	b := &pgx.Batch{}
	queueManifestState(b, m)
	res := tx.SendBatch(ctx, b)
	st, err := readManifestState(res, m)
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if st.unknown != nil {
		return st.unknown
	}
	// The writes in one round trip.
	b = &pgx.Batch{}
	if err := db.queueManifestWrites(b, m, tag, st); err != nil {
		return err
	}
	if b.Len() == 0 {
		return nil
	}
	n := b.Len()
	write := func() error {
		res := tx.SendBatch(ctx, b)
		err := readManifestWrites(res, n)
		if cerr := res.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if m.Chart == nil && !st.stored {
		// A chart version's quota is checked where the version is
		// stored (charge); any other manifest counts as OCI bytes.
		return withOCIQuota(ctx, tx, m.Name, write)
	}
	return write()
}

// storableManifest refuses a manifest whose name or digest, or a tag,
// PostgreSQL cannot store (storable).
func storableManifest(m *chartctl.OCIManifest, tag string) error {
	if !storable(m.Name, m.Digest, tag) {
		return chartctl.Invalid("name", "Invalid repository name, digest or tag.")
	}
	return nil
}

// manifestState is what storing a manifest reads first
// (queueManifestState): the first of its references that is not there,
// and whether, and since when, the manifest is stored.
type manifestState struct {
	unknown   *chartctl.UnknownReferenceError
	stored    bool
	createdAt time.Time
}

// queueManifestState adds to b the statements that lock the links and
// manifests m refers to against deletion until the transaction ends and
// read whether m is stored; readManifestState reads their answers.
func queueManifestState(b *pgx.Batch, m *chartctl.OCIManifest) {
	queueFirstMissing(b, "oci_blob_links", m.Name, m.Blobs)
	queueFirstMissing(b, "oci_manifests", m.Name, m.Manifests)
	b.Queue(`SELECT created_at FROM oci_manifests WHERE name = $1 AND digest = $2`, m.Name, m.Digest)
}

// readManifestState reads the answers of queueManifestState's statements,
// the next ones of res.
func readManifestState(res pgx.BatchResults, m *chartctl.OCIManifest) (manifestState, error) {
	var st manifestState
	blob, err := readFirstMissing(res, m.Blobs)
	if err != nil {
		return st, err
	}
	manifest, err := readFirstMissing(res, m.Manifests)
	if err != nil {
		return st, err
	}
	switch {
	case blob != "":
		st.unknown = &chartctl.UnknownReferenceError{Digest: blob}
	case manifest != "":
		st.unknown = &chartctl.UnknownReferenceError{Digest: manifest, Manifest: true}
	}
	err = res.QueryRow().Scan(&st.createdAt)
	switch {
	case err == nil:
		st.stored = true
	case !errors.Is(err, pgx.ErrNoRows):
		return st, err
	}
	return st, nil
}

// queueManifestWrites adds to b the writes that store m, tagged tag when
// it is not empty, given what st read: a stored manifest only gets its
// tag; a new one is inserted with its blobs, replacing the first manifest
// of its chart version (an alternate goes beside it). readManifestWrites
// reads their answers.
func (db *DB) queueManifestWrites(b *pgx.Batch, m *chartctl.OCIManifest, tag string, st manifestState) error {
	if st.stored {
		m.CreatedAt = utc(st.createdAt)
		if tag != "" {
			b.Queue(tagSQL, m.Name, tag, m.Digest)
		}
		return nil
	}
	var annotations []byte
	if len(m.Annotations) > 0 {
		var err error
		if annotations, err = json.Marshal(m.Annotations); err != nil {
			return err
		}
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = db.now()
	}
	m.CreatedAt = m.CreatedAt.UTC().Truncate(time.Microsecond)
	var chartRepo, chartName, chartVersion *string
	if c := m.Chart; c != nil {
		if !m.Alternate {
			b.Queue(`DELETE FROM oci_manifests
				WHERE chart_repository = $1 AND chart_name = $2 AND chart_version = $3 AND NOT chart_alternate`,
				c.Repository, c.Name, c.Version)
		}
		chartRepo, chartName, chartVersion = &c.Repository, &c.Name, &c.Version
	}
	b.Queue(`INSERT INTO oci_manifests (name, digest, media_type, artifact_type, subject, annotations,
		blobs, manifests, content, chart_repository, chart_name, chart_version, chart_alternate, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		m.Name, m.Digest, text(m.MediaType), text(m.ArtifactType), text(m.Subject), annotations,
		nonNil(texts(m.Blobs)), nonNil(texts(m.Manifests)), nonNilBytes(m.Content), chartRepo, chartName, chartVersion,
		m.Chart != nil && m.Alternate, m.CreatedAt)
	if blobs := uniq(m.Blobs); len(blobs) > 0 {
		b.Queue(`INSERT INTO oci_manifest_blobs (name, manifest, blob)
			SELECT $1, $2, b FROM unnest($3::text[]) AS u(b)`, m.Name, m.Digest, blobs)
	}
	if tag != "" {
		b.Queue(tagSQL, m.Name, tag, m.Digest)
	}
	return nil
}

// readManifestWrites reads the answers of n statements of
// queueManifestWrites, the next ones of res: a concurrent push of the
// same manifest or chart version that committed first is errRetry.
func readManifestWrites(res pgx.BatchResults, n int) error {
	for range n {
		if _, err := res.Exec(); err != nil {
			if isUnique(err, "oci_manifests_pkey") || isUnique(err, "oci_manifests_chart") {
				return errRetry
			}
			return err
		}
	}
	return nil
}

// tagSQL points tag $2 of name $1 at digest $3.
const tagSQL = `INSERT INTO oci_tags (name, tag, digest) VALUES ($1, $2, $3)
	ON CONFLICT (name, tag) DO UPDATE SET digest = EXCLUDED.digest`

// queueFirstMissing adds to b the statement that locks the rows of table
// (oci_blob_links or oci_manifests) of name and digests against deletion
// until the transaction ends; readFirstMissing reads its answer. Without
// digests it adds nothing.
func queueFirstMissing(b *pgx.Batch, table, name string, digests []string) {
	if len(digests) == 0 {
		return
	}
	b.Queue(`SELECT digest FROM `+table+` WHERE name = $1 AND digest = ANY($2)
		ORDER BY digest FOR KEY SHARE`, name, uniq(digests))
}

// readFirstMissing reads the answer of queueFirstMissing's statement for
// digests from res, and returns the first of digests without a row (""
// when every one has one).
func readFirstMissing(res pgx.BatchResults, digests []string) (string, error) {
	if len(digests) == 0 {
		return "", nil
	}
	rows, err := res.Query()
	if err != nil {
		return "", err
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", err
	}
	for _, d := range digests {
		if !slices.Contains(have, d) {
			return d, nil
		}
	}
	return "", nil
}

// manifestCols are the columns of a manifest, as scanManifest reads them.
const manifestCols = `name, digest, media_type, artifact_type, subject, annotations, blobs, manifests, content,
	chart_repository, chart_name, chart_version, chart_alternate, created_at`

func scanManifest(row pgx.Row) (*chartctl.OCIManifest, error) {
	var (
		m                                  chartctl.OCIManifest
		annotations                        []byte
		chartRepo, chartName, chartVersion *string
	)
	if err := row.Scan(&m.Name, &m.Digest, &m.MediaType, &m.ArtifactType, &m.Subject, &annotations, &m.Blobs, &m.Manifests,
		&m.Content, &chartRepo, &chartName, &chartVersion, &m.Alternate, &m.CreatedAt); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, manifestUnknown()
		}
		return nil, err
	}
	if len(annotations) > 0 {
		if err := json.Unmarshal(annotations, &m.Annotations); err != nil {
			return nil, err
		}
	}
	m.Blobs, m.Manifests = nilIfEmpty(m.Blobs), nilIfEmpty(m.Manifests)
	if chartRepo != nil {
		m.Chart = &chartctl.OCIChartRef{Repository: *chartRepo, Name: deref(chartName), Version: deref(chartVersion)}
	}
	m.CreatedAt = utc(m.CreatedAt)
	return &m, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// nonNilBytes returns b, or an empty slice for nil: a NOT NULL bytea.
func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Manifest returns the manifest with digest in name, or ENOTFOUND.
func (db *DB) Manifest(ctx context.Context, name, digest string) (*chartctl.OCIManifest, error) {
	if !storable(name, digest) {
		return nil, manifestUnknown()
	}
	m, err := scanManifest(db.pool.QueryRow(ctx, `SELECT `+manifestCols+` FROM oci_manifests WHERE name = $1 AND digest = $2`, name, digest))
	return m, db.wrap("get manifest", err)
}

// Tag returns the digest tag points to in name, or ENOTFOUND.
func (db *DB) Tag(ctx context.Context, name, tag string) (string, error) {
	if !storable(name, tag) {
		return "", tagNotFound(tag)
	}
	var d string
	err := db.pool.QueryRow(ctx, `SELECT digest FROM oci_tags WHERE name = $1 AND tag = $2`, name, tag).Scan(&d)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", tagNotFound(tag)
	}
	return d, db.wrap("get tag", err)
}

// TaggedManifest returns the manifest tag points to in name, in one
// query, or ENOTFOUND.
func (db *DB) TaggedManifest(ctx context.Context, name, tag string) (*chartctl.OCIManifest, error) {
	if !storable(name, tag) {
		return nil, tagNotFound(tag)
	}
	return remember(ctx, db, db.memos.tagged, epochmemo.NameKey{Name: name, Ref: tag}, func() (*chartctl.OCIManifest, error) {
		m, err := scanManifest(db.pool.QueryRow(ctx, `SELECT `+manifestCols+` FROM oci_manifests
			WHERE name = $1 AND digest = (SELECT digest FROM oci_tags WHERE name = $1 AND tag = $2)`, name, tag))
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return nil, tagNotFound(tag)
		} else if err != nil {
			return nil, db.wrap("get tagged manifest", err)
		}
		return m, nil
	})
}

func tagNotFound(tag string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Tag %q not found.", tag)
}

// Tags returns name's tags in lexical order after last, at most n (all
// when n < 0), and whether more follow. The page may be shared (memo.go):
// it must not be modified.
func (db *DB) Tags(ctx context.Context, name, last string, n int) ([]string, bool, error) {
	tags := []string{}
	if !storable(name, last) {
		return tags, false, nil
	}
	p, err := remember(ctx, db, db.memos.tags, pageKey{name: name, last: last, n: n}, func() (*tagPage, error) {
		tags, more, err := db.tagPage(ctx, name, last, n)
		return &tagPage{tags, more}, err
	})
	if err != nil {
		return nil, false, err
	}
	return p.tags, p.more, nil
}

// tagPage is Tags from the database.
func (db *DB) tagPage(ctx context.Context, name, last string, n int) ([]string, bool, error) {
	tags := []string{}
	limit := int64(-1)
	if n >= 0 {
		limit = int64(n) + 1
	}
	rows, err := db.pool.Query(ctx, `SELECT tag FROM oci_tags WHERE name = $1 AND tag > $2 ORDER BY tag
		LIMIT CASE WHEN $3::bigint < 0 THEN NULL ELSE $3::bigint END`, name, last, limit)
	if err != nil {
		return nil, false, db.wrap("list tags", err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, false, db.wrap("list tags", err)
	}
	more := n >= 0 && len(got) > n
	if more {
		got = got[:n]
	}
	return append(tags, got...), more, nil
}

// DeleteManifest deletes the manifest with digest in name and its tags.
func (db *DB) DeleteManifest(ctx context.Context, name, digest string) (*chartctl.OCIManifest, error) {
	if !storable(name, digest) {
		return nil, manifestUnknown()
	}
	var m *chartctl.OCIManifest
	err := db.mutate(ctx, "delete manifest", func(tx pgx.Tx) error {
		var err error
		m, err = scanManifest(tx.QueryRow(ctx, `DELETE FROM oci_manifests WHERE name = $1 AND digest = $2 RETURNING `+manifestCols, name, digest))
		return err
	})
	return m, err
}

// DeleteTag deletes one tag, or returns ENOTFOUND.
func (db *DB) DeleteTag(ctx context.Context, name, tag string) error {
	if !storable(name, tag) {
		return tagNotFound(tag)
	}
	return db.mutate(ctx, "delete tag", func(tx pgx.Tx) error {
		res, err := tx.Exec(ctx, `DELETE FROM oci_tags WHERE name = $1 AND tag = $2`, name, tag)
		if err != nil {
			return err
		}
		if res.RowsAffected() == 0 {
			return tagNotFound(tag)
		}
		return nil
	})
}

// referrersSQL reads the manifests of name $1 whose subject is $2. Its
// last condition repeats the partial index's predicate (a non-empty
// subject): a prepared statement's generic plan cannot prove it from
// subject = $2, and without it scans every manifest of the name, each
// push (whose verification asks) costing more the more versions a chart
// has.
const referrersSQL = `SELECT ` + manifestCols + ` FROM oci_manifests
	WHERE name = $1 AND subject = $2 AND subject <> '' ORDER BY digest`

// Referrers returns the manifests of name whose subject is digest,
// ordered by digest.
func (db *DB) Referrers(ctx context.Context, name, digest string) ([]*chartctl.OCIManifest, error) {
	if !storable(name, digest) || digest == "" {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, referrersSQL, name, digest)
	if err != nil {
		return nil, db.wrap("list referrers", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.OCIManifest, error) { return scanManifest(r) })
	return nilIfEmpty(out), db.wrap("list referrers", err)
}

// ChartManifest returns the manifest pushed over OCI for a chart version,
// or ENOTFOUND.
func (db *DB) ChartManifest(ctx context.Context, repo, name, version string) (*chartctl.OCIManifest, error) {
	if !storable(repo, name, version) {
		return nil, manifestUnknown()
	}
	m, err := scanManifest(db.pool.QueryRow(ctx, `SELECT `+manifestCols+` FROM oci_manifests
		WHERE chart_repository = $1 AND chart_name = $2 AND chart_version = $3 AND NOT chart_alternate`, repo, name, version))
	return m, db.wrap("get chart manifest", err)
}

// ChartAlternates implements chartctl.OCIStore.
func (db *DB) ChartAlternates(ctx context.Context, repo, name, version string) ([]string, error) {
	if !storable(repo, name, version) {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT digest FROM oci_manifests
		WHERE chart_repository = $1 AND chart_name = $2 AND chart_version = $3 AND chart_alternate ORDER BY digest`, repo, name, version)
	if err != nil {
		return nil, db.wrap("list chart alternates", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, db.wrap("list chart alternates", err)
}

// Names returns every name holding a manifest or a blob, sorted.
func (db *DB) Names(ctx context.Context) ([]string, error) {
	// Loose index scans: a name with 100,000 manifests costs what a name
	// with one does.
	rows, err := db.pool.Query(ctx, `(`+fmt.Sprintf(distinctNames, "oci_manifests")+`) UNION (`+fmt.Sprintf(distinctNames, "oci_blob_links")+`)`)
	if err != nil {
		return nil, db.wrap("list names", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, db.wrap("list names", err)
	}
	sort.Strings(names)
	return names, nil
}

// CreateUpload stores a new upload session, filling CreatedAt and
// UpdatedAt.
func (db *DB) CreateUpload(ctx context.Context, u *chartctl.OCIUpload) error {
	if u.ID == "" || !storable(u.ID, u.Name) {
		return chartctl.Invalid("id", "An upload session needs an ID.")
	}
	now := db.now()
	if u.CreatedAt.IsZero() {
		u.CreatedAt = now
	}
	u.CreatedAt = u.CreatedAt.UTC().Truncate(time.Microsecond)
	u.UpdatedAt = now
	var repoID *string
	if u.RepositoryID != "" {
		if !storable(u.RepositoryID) {
			return chartctl.Invalid("repository_id", "Invalid repository ID.")
		}
		repoID = &u.RepositoryID
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO oci_uploads (id, name, repository_id, "offset", created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, repository_id = EXCLUDED.repository_id, "offset" = EXCLUDED."offset",
			created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at`,
		u.ID, u.Name, repoID, u.Offset, u.CreatedAt, u.UpdatedAt)
	return db.wrap("create upload", err)
}

const uploadCols = `id, name, COALESCE(repository_id, ''), "offset", created_at, updated_at`

func scanUpload(row pgx.Row) (*chartctl.OCIUpload, error) {
	var u chartctl.OCIUpload
	if err := row.Scan(&u.ID, &u.Name, &u.RepositoryID, &u.Offset, &u.CreatedAt, &u.UpdatedAt); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, uploadNotFound()
		}
		return nil, err
	}
	u.CreatedAt, u.UpdatedAt = utc(u.CreatedAt), utc(u.UpdatedAt)
	return &u, nil
}

func uploadNotFound() error { return chartctl.Errorf(chartctl.ENOTFOUND, "Upload session not found.") }

// Upload returns session id, or ENOTFOUND.
func (db *DB) Upload(ctx context.Context, id string) (*chartctl.OCIUpload, error) {
	if !storable(id) {
		return nil, uploadNotFound()
	}
	u, err := scanUpload(db.pool.QueryRow(ctx, `SELECT `+uploadCols+` FROM oci_uploads WHERE id = $1`, id))
	return u, db.wrap("get upload", err)
}

// AdvanceUpload moves session id's offset from "from" to "to" in one
// statement, so of concurrent chunks exactly one advances it.
func (db *DB) AdvanceUpload(ctx context.Context, id string, from, to int64) error {
	if !storable(id) {
		return uploadNotFound()
	}
	var at int64
	err := db.tx(ctx, "advance upload", func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT "offset" FROM oci_uploads WHERE id = $1 FOR UPDATE`, id).Scan(&at)
		if errors.Is(err, pgx.ErrNoRows) {
			return uploadNotFound()
		} else if err != nil {
			return err
		}
		if at != from {
			return chartctl.Errorf(chartctl.ECONFLICT, "The upload is at offset %d, not %d.", at, from)
		}
		_, err = tx.Exec(ctx, `UPDATE oci_uploads SET "offset" = $2, updated_at = $3 WHERE id = $1`, id, to, db.now())
		return err
	})
	return err
}

// DeleteUpload deletes session id, or returns ENOTFOUND.
func (db *DB) DeleteUpload(ctx context.Context, id string) error {
	if !storable(id) {
		return uploadNotFound()
	}
	res, err := db.pool.Exec(ctx, `DELETE FROM oci_uploads WHERE id = $1`, id)
	if err != nil {
		return db.wrap("delete upload", err)
	}
	if res.RowsAffected() == 0 {
		return uploadNotFound()
	}
	return nil
}

// Uploads returns every session, oldest first.
func (db *DB) Uploads(ctx context.Context) ([]*chartctl.OCIUpload, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+uploadCols+` FROM oci_uploads ORDER BY created_at, id`)
	if err != nil {
		return nil, db.wrap("list uploads", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.OCIUpload, error) { return scanUpload(r) })
	return nilIfEmpty(out), db.wrap("list uploads", err)
}

// deleteOCIChart removes the manifests stored for a chart version, if any
// (its first and its alternates, with their tags): deleting or replacing
// a version deletes it on both protocols.
func deleteOCIChart(ctx context.Context, tx pgx.Tx, repo, name, version string) error {
	_, err := tx.Exec(ctx, `DELETE FROM oci_manifests WHERE chart_repository = $1 AND chart_name = $2 AND chart_version = $3`,
		repo, name, version)
	return err
}

// deleteOCIRepo removes every manifest, tag and blob link of the names
// under repository repo, and the chart manifests of its versions,
// returning the blob digests it unlinked.
func deleteOCIRepo(ctx context.Context, tx pgx.Tx, repo, repoID string) ([]string, error) {
	// Upload sessions bound to the repository (by ID; by name for a
	// record not bound yet) go with it; their bytes are left to garbage
	// collection, which removes session data without a record.
	if _, err := tx.Exec(ctx, `DELETE FROM oci_uploads
		WHERE repository_id = $2 OR (repository_id IS NULL AND split_part(name, '/', 1) = $1)`, repo, repoID); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM oci_manifests
		WHERE name = $1 OR starts_with(name, $1 || '/') OR chart_repository = $1`, repo); err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, `DELETE FROM oci_blob_links WHERE name = $1 OR starts_with(name, $1 || '/') RETURNING digest`, repo)
	if err != nil {
		return nil, err
	}
	digests, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	sort.Strings(digests)
	return slices.Compact(digests), nil
}

func uniq(ds []string) []string {
	seen := map[string]bool{}
	out := ds[:0:0]
	for _, d := range ds {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

func blobUnknown() error { return chartctl.Errorf(chartctl.ENOTFOUND, "Blob not found.") }

func manifestUnknown() error { return chartctl.Errorf(chartctl.ENOTFOUND, "Manifest not found.") }
