package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
	textfmt "github.com/chartctl/chartctl/internal/text"
)

// scope is one quota scope: a repository or an organization.
type scope struct{ kind, name string }

// repoScopes returns the quota scopes a chart version of repository id
// counts in, organization first: the order in which charge locks their
// usage rows, the same in every transaction, so concurrent writers queue
// instead of deadlocking.
//
// A proxy repository has none: its cache counts against no quota
// (CONTRACT §18 decision 12).
func repoScopes(ctx context.Context, tx pgx.Tx, id string) ([]scope, error) {
	var (
		name, org string
		proxy     bool
	)
	if err := tx.QueryRow(ctx, `SELECT name, COALESCE(organization, ''), proxy IS NOT NULL FROM repositories WHERE id = $1`, id).Scan(&name, &org, &proxy); err != nil {
		return nil, err
	}
	return chargedScopes(name, org, proxy), nil
}

// chargedScopes are repoScopes of the repository name of organization org
// (empty: none), a proxy or not.
func chargedScopes(name, org string, proxy bool) []scope {
	if proxy {
		return nil
	}
	if org == "" {
		return []scope{{chartctl.QuotaRepository, name}}
	}
	return []scope{{chartctl.QuotaOrganization, org}, {chartctl.QuotaRepository, name}}
}

// charge adds dBytes and dVersions to the usage of repository id and of
// its organization, locking their usage rows FOR UPDATE first: growth past
// a quota is EQUOTA and changes nothing. Chart writes call it after
// changing the records (and last, so the rows are held only until their
// commit).
func charge(ctx context.Context, tx pgx.Tx, id string, dBytes, dVersions int64) error {
	if dBytes == 0 && dVersions == 0 {
		return nil
	}
	scopes, err := repoScopes(ctx, tx, id)
	if err != nil {
		return err
	}
	return chargeScopes(ctx, tx, scopes, dBytes, dVersions)
}

// chargeScopes is charge on the scopes repoScopes returned. Each scope's
// usage row is moved and locked by one UPDATE that answers the usage
// before the change and the scope's quota: a change past a quota returns
// EQUOTA, and the caller's transaction, rolled back, changes nothing.
func chargeScopes(ctx context.Context, tx pgx.Tx, scopes []scope, dBytes, dVersions int64) error {
	b := &pgx.Batch{}
	c := queueCharge(b, scopes, dBytes, dVersions)
	if b.Len() == 0 {
		return nil
	}
	res := tx.SendBatch(ctx, b)
	err := c.read(res)
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return c.check(ctx, tx)
}

// pendingCharge is chargeScopes split in three, so that its statements can
// share a round trip with others of the transaction: queueCharge adds
// them to a batch, read reads their answers from its results, and check,
// once the batch is closed, refuses a change past a quota.
type pendingCharge struct {
	scopes            []scope
	dBytes, dVersions int64
	answers           []chargeAnswer
}

// chargeAnswer is one scope's answer to usageChargeSQL; missing when the
// scope had no usage row.
type chargeAnswer struct {
	used, count int64
	maxB, maxV  *int64
	missing     bool
}

// queueCharge adds the charge of dBytes and dVersions to each of scopes
// to b (nothing when both are zero).
func queueCharge(b *pgx.Batch, scopes []scope, dBytes, dVersions int64) *pendingCharge {
	c := &pendingCharge{dBytes: dBytes, dVersions: dVersions}
	if dBytes == 0 && dVersions == 0 {
		return c
	}
	c.scopes = scopes
	for _, sc := range scopes {
		b.Queue(usageChargeSQL, sc.kind, sc.name, dBytes, dVersions)
	}
	return c
}

// read reads the answers of queueCharge's statements, the next ones of res.
func (c *pendingCharge) read(res pgx.BatchResults) error {
	c.answers = make([]chargeAnswer, len(c.scopes))
	for i := range c.scopes {
		a := &c.answers[i]
		err := res.QueryRow().Scan(&a.used, &a.count, &a.maxB, &a.maxV)
		if errors.Is(err, pgx.ErrNoRows) {
			a.missing = true
		} else if err != nil {
			return err
		}
	}
	return nil
}

// check refuses (EQUOTA) the change when it takes a scope past a quota.
// A scope without a usage row (every repository and organization gets
// one when created, and schema 4 counted the older ones) is counted from
// the records first, which already show this change, so the change is
// taken out again before it is checked and added.
func (c *pendingCharge) check(ctx context.Context, tx pgx.Tx) error {
	for i, sc := range c.scopes {
		a := c.answers[i]
		if a.missing {
			if err := countUsage(ctx, tx, sc); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE usage SET bytes = bytes - $3, versions = versions - $4 WHERE scope = $1 AND name = $2`,
				sc.kind, sc.name, c.dBytes, c.dVersions); err != nil {
				return err
			}
			err := tx.QueryRow(ctx, usageChargeSQL, sc.kind, sc.name, c.dBytes, c.dVersions).Scan(&a.used, &a.count, &a.maxB, &a.maxV)
			if errors.Is(err, pgx.ErrNoRows) {
				continue // a deleted repository: nothing to keep
			} else if err != nil {
				return err
			}
		}
		if a.maxB != nil && c.dBytes > 0 {
			// Chart bytes are a counter; OCI artifacts are counted from
			// their records (ociquota.go).
			oci, err := ociBytes(ctx, tx, sc)
			if err != nil {
				return err
			}
			if a.used+oci+c.dBytes > *a.maxB {
				return quotaError(sc, "max_bytes", fmt.Sprintf("%d bytes", *a.maxB),
					fmt.Sprintf("%d bytes used; this upload needs %d more", a.used+oci, c.dBytes))
			}
		}
		if a.maxV != nil && c.dVersions > 0 && a.count+c.dVersions > *a.maxV {
			return quotaError(sc, "max_versions", textfmt.Count(*a.maxV, "chart version", "chart versions"), fmt.Sprintf("%d stored", a.count))
		}
	}
	return nil
}

// usageChargeSQL adds $3 bytes and $4 versions to the usage of scope $1 name
// $2, locking its row, and answers the usage before the change and the
// scope's quota (NULL where it has none).
const usageChargeSQL = `UPDATE usage u SET bytes = u.bytes + $3, versions = u.versions + $4
	WHERE u.scope = $1 AND u.name = $2
	RETURNING u.bytes - $3, u.versions - $4,
		(SELECT q.max_bytes FROM quotas q WHERE q.scope = u.scope AND q.name = u.name),
		(SELECT q.max_versions FROM quotas q WHERE q.scope = u.scope AND q.name = u.name)`

// countUsage computes the usage of sc from the records and stores it when
// no row is there.
func countUsage(ctx context.Context, tx pgx.Tx, sc scope) error {
	q := `INSERT INTO usage (scope, name, bytes, versions)
		SELECT 'repository', r.name, COALESCE(sum(c.size + c.prov_size), 0), count(c.name)
		FROM repositories r LEFT JOIN chart_versions c ON c.repository_id = r.id AND r.proxy IS NULL WHERE r.name = $1 GROUP BY r.name
		ON CONFLICT DO NOTHING`
	if sc.kind == chartctl.QuotaOrganization {
		q = `INSERT INTO usage (scope, name, bytes, versions)
			SELECT 'organization', $1, COALESCE(sum(c.size + c.prov_size), 0), count(c.name)
			FROM repositories r JOIN chart_versions c ON c.repository_id = r.id WHERE r.organization = $1 AND r.proxy IS NULL
			ON CONFLICT DO NOTHING`
	}
	_, err := tx.Exec(ctx, q, sc.name)
	return err
}

func quotaError(sc scope, which, limit, use string) error {
	return chartctl.Errorf(chartctl.EQUOTA, "Quota exceeded: the %s quota of %s %q is %s, with %s. Delete chart versions or OCI artifacts, or ask an admin to raise the quota.",
		which, sc.kind, sc.name, limit, use)
}

// checkScope returns ENOTFOUND unless the repository or organization
// exists, and EINVALID for an unknown scope.
func checkScope(ctx context.Context, q querier, sc scope) error {
	table, notFound, err := scopeTable(sc.kind)
	if err != nil {
		return err
	}
	var ok bool
	if storable(sc.name) {
		if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+table+` WHERE name = $1)`, sc.name).Scan(&ok); err != nil {
			return err
		}
	}
	if !ok {
		return notFound(sc.name)
	}
	return nil
}

// scopeTable returns the table of kind's scopes (repositories or
// organizations) and its not-found error, or EINVALID for an unknown
// kind.
func scopeTable(kind string) (string, func(name string) error, error) {
	switch kind {
	case chartctl.QuotaRepository:
		return "repositories", repoNotFound, nil
	case chartctl.QuotaOrganization:
		return "organizations", orgNotFound, nil
	}
	return "", nil, chartctl.Invalid("scope", "Unknown quota scope %q.", kind)
}

// Quota returns a quota and its usage.
func (db *DB) Quota(ctx context.Context, kind, name string) (chartctl.Quota, chartctl.Usage, error) {
	var (
		q chartctl.Quota
		u chartctl.Usage
	)
	sc := scope{kind, name}
	err := db.tx(ctx, "get quota", func(tx pgx.Tx) error {
		q, u = chartctl.Quota{}, chartctl.Usage{}
		if err := checkScope(ctx, tx, sc); err != nil {
			return err
		}
		var err error
		if q, err = limits(ctx, tx, kind, name); err != nil {
			return err
		}
		err = tx.QueryRow(ctx, `SELECT bytes, versions FROM usage WHERE scope = $1 AND name = $2`, kind, name).Scan(&u.Bytes, &u.Versions)
		if errors.Is(err, pgx.ErrNoRows) {
			if err := countUsage(ctx, tx, sc); err != nil {
				return err
			}
			err = tx.QueryRow(ctx, `SELECT bytes, versions FROM usage WHERE scope = $1 AND name = $2`, kind, name).Scan(&u.Bytes, &u.Versions)
		}
		if err != nil {
			return err
		}
		oci, err := ociBytes(ctx, tx, sc)
		u.Bytes += oci
		return err
	})
	return q, u, err
}

// QuotaLimits returns a quota without its usage. It is asked before every
// blob a push stores, so the scope's existence and its quota are read in
// one statement (one round trip, one snapshot) rather than a transaction.
func (db *DB) QuotaLimits(ctx context.Context, kind, name string) (chartctl.Quota, error) {
	table, notFound, err := scopeTable(kind)
	if err != nil {
		return chartctl.Quota{}, err
	}
	if !storable(name) {
		return chartctl.Quota{}, notFound(name)
	}
	var (
		q  chartctl.Quota
		ok bool
	)
	err = db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+table+` WHERE name = $2), q.max_bytes, q.max_versions
		FROM (SELECT 1) AS one LEFT JOIN quotas q ON q.scope = $1 AND q.name = $2`, kind, name).Scan(&ok, &q.MaxBytes, &q.MaxVersions)
	if err != nil {
		return chartctl.Quota{}, db.wrap("get quota", err)
	}
	if !ok {
		return chartctl.Quota{}, notFound(name)
	}
	return q, nil
}

// limits reads a scope's quota; a scope without one has the zero Quota.
func limits(ctx context.Context, tx pgx.Tx, kind, name string) (chartctl.Quota, error) {
	var q chartctl.Quota
	err := tx.QueryRow(ctx, `SELECT max_bytes, max_versions FROM quotas WHERE scope = $1 AND name = $2`,
		kind, name).Scan(&q.MaxBytes, &q.MaxVersions)
	if errors.Is(err, pgx.ErrNoRows) {
		return chartctl.Quota{}, nil
	}
	return q, err
}

// SetQuota replaces a quota.
func (db *DB) SetQuota(ctx context.Context, kind, name string, q chartctl.Quota) error {
	return db.mutate(ctx, "set quota", func(tx pgx.Tx) error {
		if err := checkScope(ctx, tx, scope{kind, name}); err != nil {
			return err
		}
		if kind == chartctl.QuotaRepository && q.RepositoryID != "" {
			// Deleted and re-created since the caller was authorized?
			if id, err := lockRepo(ctx, tx, name, false); err != nil {
				return err
			} else if id != q.RepositoryID {
				return repoNotFound(name)
			}
		}
		if q.MaxBytes == nil && q.MaxVersions == nil {
			_, err := tx.Exec(ctx, `DELETE FROM quotas WHERE scope = $1 AND name = $2`, kind, name)
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO quotas (scope, name, max_bytes, max_versions) VALUES ($1, $2, $3, $4)
			ON CONFLICT (scope, name) DO UPDATE SET max_bytes = EXCLUDED.max_bytes, max_versions = EXCLUDED.max_versions`,
			kind, name, q.MaxBytes, q.MaxVersions)
		return err
	})
}

// repoDrop is what deleting a repository takes off the usage of its
// scopes.
type repoDrop struct {
	scopes          []scope
	bytes, versions int64
}

// repoUsage reads, before a repository (id) is deleted, what its deletion
// takes off usage.
func repoUsage(ctx context.Context, tx pgx.Tx, id string) (*repoDrop, error) {
	scopes, err := repoScopes(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	d := &repoDrop{scopes: scopes}
	err = tx.QueryRow(ctx, `SELECT COALESCE(sum(size + prov_size), 0), count(*) FROM chart_versions WHERE repository_id = $1`,
		id).Scan(&d.bytes, &d.versions)
	return d, err
}

// dropRepoUsage takes a deleted repository off its organization's usage
// and removes its own usage and quota. DeleteRepository calls it last,
// after the blob references: every chart write locks blob_refs rows
// before usage rows, so the deletion does too.
func dropRepoUsage(ctx context.Context, tx pgx.Tx, d *repoDrop, name string) error {
	if err := chargeScopes(ctx, tx, d.scopes, -d.bytes, -d.versions); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM usage WHERE scope = 'repository' AND name = $1`, name); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM quotas WHERE scope = 'repository' AND name = $1`, name)
	return err
}

// AddDownloads adds each count to its version's counter in one
// transaction; counts of versions that no longer exist are dropped.
func (db *DB) AddDownloads(ctx context.Context, counts []chartctl.DownloadCount) error {
	if len(counts) == 0 {
		return nil
	}
	repos, names, versions := make([]string, 0, len(counts)), make([]string, 0, len(counts)), make([]string, 0, len(counts))
	ns, lasts := make([]int64, 0, len(counts)), make([]time.Time, 0, len(counts))
	for _, c := range counts {
		if c.Count < 0 || !storable(c.Repository, c.Name, c.Version) {
			continue
		}
		repos, names, versions = append(repos, c.Repository), append(names, c.Name), append(versions, c.Version)
		ns, lasts = append(ns, c.Count), append(lasts, c.Last.UTC())
	}
	if len(ns) == 0 {
		return nil
	}
	// Rows in key order, so concurrent flushes of several replicas queue
	// on the same rows instead of deadlocking.
	_, err := db.pool.Exec(ctx, `INSERT INTO downloads AS d (repository_id, name, version, count, last_at)
		SELECT c.repository_id, c.name, c.version, sum(u.n), max(u.last)
		FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::timestamptz[]) AS u(repo, name, version, n, last)
		JOIN repositories r ON r.name = u.repo
		JOIN chart_versions c ON c.repository_id = r.id AND c.name = u.name AND c.version = u.version
		GROUP BY c.repository_id, c.name, c.version
		ORDER BY c.repository_id, c.name, c.version
		ON CONFLICT (repository_id, name, version) DO UPDATE
		SET count = d.count + EXCLUDED.count, last_at = GREATEST(d.last_at, EXCLUDED.last_at)`,
		repos, names, versions, ns, lasts)
	if isForeignKey(err, "downloads_repository_id_name_version_fkey") {
		// A version deleted between the join and the insert: its
		// counts go with it.
		return nil
	}
	return db.wrap("add downloads", err)
}

type retentionRecord struct {
	KeepLatest             *int           `json:"keep_latest,omitempty"`
	KeepPushedWithin       *time.Duration `json:"keep_pushed_within,omitempty"`
	KeepDownloadedWithin   *time.Duration `json:"keep_downloaded_within,omitempty"`
	KeepMatching           string         `json:"keep_matching,omitempty"`
	DeletePrereleasesAfter *time.Duration `json:"delete_prereleases_after,omitempty"`
	Schedule               string         `json:"schedule,omitempty"`
	LastRun                time.Time      `json:"last_run,omitzero"`
}

func (r *retentionRecord) domain() chartctl.RetentionPolicy {
	return chartctl.RetentionPolicy{KeepLatest: r.KeepLatest, KeepPushedWithin: r.KeepPushedWithin,
		KeepDownloadedWithin: r.KeepDownloadedWithin, KeepMatching: r.KeepMatching,
		DeletePrereleasesAfter: r.DeletePrereleasesAfter, Schedule: r.Schedule, LastRun: r.LastRun}
}

// SetRetentionPolicy replaces a repository's policy; nil removes it.
func (db *DB) SetRetentionPolicy(ctx context.Context, repo string, p *chartctl.RetentionPolicy) error {
	return db.mutate(ctx, "set retention policy", func(tx pgx.Tx) error {
		id, err := lockRepo(ctx, tx, repo, false)
		if err != nil {
			return err
		}
		if p != nil && p.RepositoryID != "" && p.RepositoryID != id {
			// Deleted and re-created since the caller was authorized.
			return repoNotFound(repo)
		}
		if p == nil {
			_, err := tx.Exec(ctx, `DELETE FROM retention_policies WHERE repository_id = $1`, id)
			return err
		}
		b, err := json.Marshal(&retentionRecord{KeepLatest: p.KeepLatest, KeepPushedWithin: p.KeepPushedWithin,
			KeepDownloadedWithin: p.KeepDownloadedWithin, KeepMatching: text(p.KeepMatching),
			DeletePrereleasesAfter: p.DeletePrereleasesAfter, Schedule: text(p.Schedule)})
		if err != nil {
			return err
		}
		// The time of the last scheduled run stays (MarkRetentionRun sets
		// it): a new schedule counts from it.
		_, err = tx.Exec(ctx, `INSERT INTO retention_policies (repository_id, policy) VALUES ($1, $2)
			ON CONFLICT (repository_id) DO UPDATE SET policy = EXCLUDED.policy ||
				jsonb_strip_nulls(jsonb_build_object('last_run', retention_policies.policy->'last_run'))`, id, string(b))
		return err
	})
}

// MarkRetentionRun records when a scheduled run applied repo's policy, in
// the policy's document (no schema change: the policy is JSON).
func (db *DB) MarkRetentionRun(ctx context.Context, repo string, at time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE retention_policies p SET policy = jsonb_set(p.policy, '{last_run}', to_jsonb($2::text))
		FROM repositories r WHERE r.id = p.repository_id AND r.name = $1`, repo, at.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return db.wrap("record retention run", err)
	}
	if tag.RowsAffected() == 0 {
		return chartctl.Errorf(chartctl.ENOTFOUND, "Repository %q has no retention policy.", repo)
	}
	return nil
}

// RetentionPolicies returns every policy, by repository.
func (db *DB) RetentionPolicies(ctx context.Context) (map[string]*chartctl.RetentionPolicy, error) {
	rows, err := db.pool.Query(ctx, `SELECT r.name, p.policy FROM retention_policies p JOIN repositories r ON r.id = p.repository_id`)
	if err != nil {
		return nil, db.wrap("list retention policies", err)
	}
	out := map[string]*chartctl.RetentionPolicy{}
	var (
		name string
		b    []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&name, &b}, func() error {
		var r retentionRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("retention policy of %s: %w", name, err)
		}
		p := r.domain()
		out[name] = &p
		return nil
	})
	return out, db.wrap("list retention policies", err)
}

// ChartPage returns the page rendered for the archive with chartDigest
// (internal/chartpage's Backend). Returns ENOTFOUND if none is kept.
func (db *DB) ChartPage(ctx context.Context, chartDigest string) ([]byte, error) {
	var page []byte
	err := db.pool.QueryRow(ctx, `SELECT page FROM chart_pages WHERE digest = $1`, text(chartDigest)).Scan(&page)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "No rendered page for this chart.")
	}
	return page, db.wrap("load chart page", err)
}

// SetChartPages keeps each page of pages as the page of the archive with
// its chart digest, replacing what was kept, in one statement.
func (db *DB) SetChartPages(ctx context.Context, pages map[string][]byte) error {
	digests, bodies := make([]string, 0, len(pages)), make([][]byte, 0, len(pages))
	for d, page := range pages {
		digests, bodies = append(digests, text(d)), append(bodies, nonNilBytes(page))
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO chart_pages (digest, page) SELECT * FROM unnest($1::text[], $2::bytea[])
		ON CONFLICT (digest) DO UPDATE SET page = EXCLUDED.page`, digests, bodies)
	return db.wrap("store chart pages", err)
}

// DeleteChartPage drops the page of the archive with chartDigest; a
// missing one is not an error.
func (db *DB) DeleteChartPage(ctx context.Context, chartDigest string) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM chart_pages WHERE digest = $1`, text(chartDigest))
	return db.wrap("delete chart page", err)
}
