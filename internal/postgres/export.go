package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Ensure DB dumps its records.
var _ chartctl.Exporter = (*DB)(nil)

// Export calls fn with every record, all read in one read-only REPEATABLE
// READ transaction: a consistent snapshot that writers (on any replica)
// do not wait for. Records come in dependency order (DumpKinds). What is
// left out (short-lived credentials, deliveries, derived data) is listed
// on chartctl.DumpRecord, as in bolt.
func (db *DB) Export(ctx context.Context, snapshot func(), fn func(chartctl.DumpRecord) error) error {
	called := false
	return db.readTx(ctx, "export", func(tx pgx.Tx) error {
		if called {
			// A retry after a dropped connection: fn has seen records
			// already, and must not see them twice.
			return chartctl.Errorf(chartctl.EUNAVAILABLE, "The database connection was lost during the export; run it again.")
		}
		called = true
		// The snapshot is taken by the first statement, not by BEGIN.
		if _, err := tx.Exec(ctx, `SELECT 1`); err != nil {
			return err
		}
		if snapshot != nil {
			snapshot()
		}
		steps := []struct {
			sql string
			one func(pgx.Rows) error
		}{
			{`SELECT ` + userCols + ` FROM users ORDER BY id`, func(r pgx.Rows) error {
				u, err := scanUser(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{User: u})
			}},
			{`SELECT ` + apiKeyCols + ` FROM api_keys ORDER BY id`, func(r pgx.Rows) error {
				k, err := scanAPIKey(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{APIKey: k})
			}},
			{`SELECT id, name, redirect_uris, public, secret_hash, created_at FROM oauth_clients ORDER BY id`, func(r pgx.Rows) error {
				var c chartctl.OAuthClient
				if err := r.Scan(&c.ID, &c.Name, &c.RedirectURIs, &c.Public, &c.SecretHash, &c.CreatedAt); err != nil {
					return err
				}
				c.RedirectURIs, c.SecretHash = nilIfEmpty(c.RedirectURIs), nilIfEmpty(c.SecretHash)
				c.CreatedAt = utc(c.CreatedAt)
				return fn(chartctl.DumpRecord{OAuthClient: &c})
			}},
			{`SELECT ` + orgCols + ` FROM organizations ORDER BY name`, func(r pgx.Rows) error {
				o, err := scanOrg(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Organization: o})
			}},
			{`SELECT ` + repoCols + ` FROM repositories ORDER BY name`, func(r pgx.Rows) error {
				rp, err := scanRepo(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Repository: rp})
			}},
			{`SELECT ` + teamCols + ` FROM teams t ORDER BY t.name`, func(r pgx.Rows) error {
				t, err := scanTeam(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Team: t})
			}},
			{`SELECT ` + memberCols + ` FROM members m JOIN teams t ON t.id = m.team_id ORDER BY t.name, m.id`, func(r pgx.Rows) error {
				m, err := scanMember(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Member: m})
			}},
		}
		steps = append(steps, []struct {
			sql string
			one func(pgx.Rows) error
		}{
			{`SELECT ` + grantCols + ` FROM ` + grantFrom + ` ORDER BY g.id`, func(r pgx.Rows) error {
				g, err := scanGrant(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Grant: g})
			}},
			{`SELECT ` + robotCols + ` FROM ` + robotFrom + ` ORDER BY b.id`, func(r pgx.Rows) error {
				b, err := scanRobot(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Robot: b})
			}},
			{`SELECT ` + publisherCols + ` FROM trusted_publishers ORDER BY id`, func(r pgx.Rows) error {
				p, err := scanPublisher(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Publisher: p})
			}},
			{`SELECT ` + scimTokenCols + ` FROM scim_tokens ORDER BY id`, func(r pgx.Rows) error {
				t, err := scanSCIMToken(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{SCIMToken: t})
			}},
			{`SELECT ` + scimGroupCols + ` FROM scim_groups ORDER BY id`, func(r pgx.Rows) error {
				g, err := scanSCIMGroup(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{SCIMGroup: g})
			}},
			{`SELECT ` + trustCols + ` FROM trust_entries ORDER BY scope, scope_id, name`, func(r pgx.Rows) error {
				e, err := scanTrust(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{TrustEntry: e})
			}},
		}...)
		steps = append(steps, []struct {
			sql string
			one func(pgx.Rows) error
		}{
			{`SELECT r.name, ` + qualified(chartCols) + `, chart_versions.index_entry, chart_versions.index_entry_json` + downloadCols + `
				FROM chart_versions JOIN repositories r ON r.id = chart_versions.repository_id` + downloadsJoin + `
				ORDER BY r.name, chart_versions.name, chart_versions.version`, func(r pgx.Rows) error {
				cv, err := scanExportChart(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{ChartVersion: cv})
			}},
			{`SELECT scope, name, max_bytes, max_versions FROM quotas
				WHERE max_bytes IS NOT NULL OR max_versions IS NOT NULL ORDER BY scope, name`, func(r pgx.Rows) error {
				var q chartctl.ScopedQuota
				if err := r.Scan(&q.Scope, &q.Name, &q.Quota.MaxBytes, &q.Quota.MaxVersions); err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Quota: &q})
			}},
			{`SELECT r.name, p.policy FROM retention_policies p JOIN repositories r ON r.id = p.repository_id ORDER BY r.name`, func(r pgx.Rows) error {
				var (
					name string
					b    []byte
					rec  retentionRecord
				)
				if err := r.Scan(&name, &b); err != nil {
					return err
				}
				if err := json.Unmarshal(b, &rec); err != nil {
					return fmt.Errorf("retention policy of %s: %w", name, err)
				}
				return fn(chartctl.DumpRecord{Retention: &chartctl.RepositoryRetention{Repository: name, Policy: rec.domain()}})
			}},
			{`SELECT 'organization', organization_id, policy FROM organization_policies UNION ALL
				SELECT 'repository', repository_id, policy FROM repository_policies ORDER BY 1, 2`, func(r pgx.Rows) error {
				var (
					scope, id string
					b         []byte
					rec       policyRecord
				)
				if err := r.Scan(&scope, &id, &b); err != nil {
					return err
				}
				if err := json.Unmarshal(b, &rec); err != nil {
					return fmt.Errorf("policy of %s: %w", id, err)
				}
				return fn(chartctl.DumpRecord{Policy: &chartctl.ScopedPolicy{Scope: scope, ID: id, Policy: rec.domain()}})
			}},
			{`SELECT ` + replicationCols + ` FROM replications ORDER BY name`, func(r pgx.Rows) error {
				rep, err := scanReplication(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Replication: rep})
			}},
			{`SELECT ` + webhookCols + ` FROM webhooks ORDER BY id`, func(r pgx.Rows) error {
				w, err := scanWebhook(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{Webhook: w})
			}},
			{`SELECT name, digest, size, linked_at FROM oci_blob_links ORDER BY name, digest`, func(r pgx.Rows) error {
				var l chartctl.OCIBlobLink
				if err := r.Scan(&l.Name, &l.Digest, &l.Size, &l.LinkedAt); err != nil {
					return err
				}
				l.LinkedAt = utc(l.LinkedAt)
				return fn(chartctl.DumpRecord{OCIBlobLink: &l})
			}},
			{`SELECT ` + manifestCols + ` FROM oci_manifests ORDER BY name, digest`, func(r pgx.Rows) error {
				m, err := scanManifest(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{OCIManifest: m})
			}},
			{`SELECT name, tag, digest FROM oci_tags ORDER BY name, tag`, func(r pgx.Rows) error {
				var t chartctl.OCITag
				if err := r.Scan(&t.Name, &t.Tag, &t.Digest); err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{OCITag: &t})
			}},
			{`SELECT ` + auditCols + ` FROM audit_log ORDER BY seq`, func(r pgx.Rows) error {
				e, err := scanAudit(r)
				if err != nil {
					return err
				}
				return fn(chartctl.DumpRecord{AuditEntry: e})
			}},
		}...)
		for _, s := range steps {
			rows, err := tx.Query(ctx, s.sql)
			if err != nil {
				return err
			}
			for rows.Next() {
				if err := ctx.Err(); err != nil {
					rows.Close()
					return err
				}
				if err := s.one(rows); err != nil {
					rows.Close()
					return err
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
}

// scanExportChart reads repository name, chartCols, index_entry,
// index_entry_json and
// downloadCols.
func scanExportChart(row pgx.Row) (*chartctl.ChartVersion, error) {
	cv := &chartctl.ChartVersion{}
	var (
		metadata, verification, images, policy, entry, entryJSON []byte
		count                                                    *int64
		last                                                     *time.Time
	)
	if err := row.Scan(&cv.Repository, &cv.Name, &cv.Version, &cv.AppVersion, &cv.Description, &cv.Keywords,
		&cv.Digest, &cv.ContentDigest, &cv.Size, &cv.ProvDigest, &cv.ProvSize, &cv.CreatedAt, &metadata, &verification,
		&cv.HeldUntil, &images, &policy, &entry, &entryJSON, &count, &last); err != nil {
		return nil, err
	}
	cv.HeldUntil = utcPtr(cv.HeldUntil)
	var err error
	if cv.Verification, err = decodeVerification(verification); err != nil {
		return nil, err
	}
	if cv.Images, err = decodeImages(images); err != nil {
		return nil, err
	}
	if cv.Policy, err = decodeVersionPolicy(policy); err != nil {
		return nil, err
	}
	if count != nil {
		cv.Downloads, cv.LastDownloadedAt = *count, utcPtr(last)
	}
	cv.Keywords = nilIfEmpty(cv.Keywords)
	cv.CreatedAt = utc(cv.CreatedAt)
	if len(metadata) > 0 {
		cv.Metadata = metadata
	}
	if len(entry) > 0 {
		cv.IndexEntry = entry
		if len(entryJSON) > 0 {
			cv.IndexEntryJSON = entryJSON
		}
	}
	return cv, nil
}
