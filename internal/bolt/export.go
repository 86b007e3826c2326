package bolt

import (
	"bytes"
	"context"
	"strings"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Ensure DB dumps its records.
var _ chartctl.Exporter = (*DB)(nil)

// Export calls fn with every record, all read in one bbolt read
// transaction: a consistent snapshot that writers do not wait for. What is
// left out (short-lived credentials, deliveries, derived data) is listed
// on chartctl.DumpRecord.
func (db *DB) Export(ctx context.Context, snapshot func(), fn func(chartctl.DumpRecord) error) error {
	err := db.db.View(func(tx *bbolt.Tx) error {
		if snapshot != nil {
			snapshot()
		}
		each := func(name string, one func(k, v []byte) error) error {
			return bucket(tx, name).ForEach(func(k, v []byte) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				return one(k, v)
			})
		}
		// record decodes a stored record and hands fn what conv makes of it.
		record := func(bucketName string, conv func(k, v []byte) (chartctl.DumpRecord, error)) func() error {
			return func() error {
				return each(bucketName, func(k, v []byte) error {
					r, err := conv(k, v)
					if err != nil {
						return err
					}
					return fn(r)
				})
			}
		}
		steps := []func() error{
			record(usersBucket, func(_, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[userRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				return chartctl.DumpRecord{User: r.domain()}, nil
			}),
			record(apiKeysBucket, func(_, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[apiKeyRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				return chartctl.DumpRecord{APIKey: r.domain()}, nil
			}),
			record(oauthClientsBucket, func(_, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[oauthClientRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				return chartctl.DumpRecord{OAuthClient: r.domain()}, nil
			}),
			record(orgsBucket, func(_, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[orgRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				return chartctl.DumpRecord{Organization: r.domain()}, nil
			}),
			record(reposBucket, func(_, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[repoRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				return chartctl.DumpRecord{Repository: r.domain()}, nil
			}),
			record(teamsBucket, func(_, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[teamRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				return chartctl.DumpRecord{Team: r.domain()}, nil
			}),
			// Nested buckets: members per team.
			func() error {
				members := bucket(tx, membersBucket)
				return members.ForEachBucket(func(team []byte) error {
					return members.Bucket(team).ForEach(func(_, v []byte) error {
						r, err := decode[memberRecord](v)
						if err != nil {
							return err
						}
						return fn(chartctl.DumpRecord{Member: r.domain()})
					})
				})
			},
			// Grants, with the names of their repositories and subjects.
			func() error {
				repoNames, teamNames := map[string]string{}, map[string]string{}
				if err := bucket(tx, reposBucket).ForEach(func(_, v []byte) error {
					r, err := decode[repoRecord](v)
					if err == nil {
						repoNames[r.ID] = r.Name
					}
					return err
				}); err != nil {
					return err
				}
				if err := bucket(tx, teamsBucket).ForEach(func(_, v []byte) error {
					r, err := decode[teamRecord](v)
					if err == nil {
						teamNames[r.ID] = r.Name
					}
					return err
				}); err != nil {
					return err
				}
				return each(grantsBucket, func(_, v []byte) error {
					r, err := decode[grantRecord](v)
					if err != nil {
						return err
					}
					g := &chartctl.Grant{ID: r.ID, RepositoryID: r.RepositoryID, Repository: repoNames[r.RepositoryID],
						Kind: chartctl.GrantKind(r.Kind), SubjectID: r.SubjectID, Role: chartctl.RepoRole(r.Role),
						CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt}
					if g.Kind == chartctl.GrantTeam {
						g.Subject = teamNames[r.SubjectID]
					} else if u, err := getUserRecord(tx, r.SubjectID); err == nil {
						g.Subject = u.Email
					}
					return fn(chartctl.DumpRecord{Grant: g})
				})
			},
			record(robotsBucket, func(_, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[robotRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				return chartctl.DumpRecord{Robot: r.domain()}, nil
			}),
			record(publishersBucket, func(_, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[publisherRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				return chartctl.DumpRecord{Publisher: r.domain()}, nil
			}),
			record(scimTokensBucket, func(_, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[scimTokenRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				return chartctl.DumpRecord{SCIMToken: r.domain()}, nil
			}),
			record(scimGroupsBucket, func(_, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[scimGroupRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				return chartctl.DumpRecord{SCIMGroup: r.domain()}, nil
			}),
			record(trustBucket, func(_, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[trustRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				return chartctl.DumpRecord{TrustEntry: r.domain()}, nil
			}),
			// Chart versions per repository, with index entry and counter.
			func() error {
				charts, index := bucket(tx, chartsBucket), bucket(tx, chartIndexBucket)
				return charts.ForEachBucket(func(repo []byte) error {
					ib := index.Bucket(repo)
					return charts.Bucket(repo).ForEach(func(k, v []byte) error {
						if err := ctx.Err(); err != nil {
							return err
						}
						r, err := decode[chartRecord](v)
						if err != nil {
							return err
						}
						cv := withDownloads(tx, r.domain())
						if iv, err := indexVersion(string(repo), ib, k, v); err == nil && len(iv.IndexEntry) > 0 {
							cv.IndexEntry, cv.IndexEntryJSON = iv.IndexEntry, iv.IndexEntryJSON
						}
						return fn(chartctl.DumpRecord{ChartVersion: cv})
					})
				})
			},
			record(quotasBucket, func(k, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[quotaRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				scope, name, _ := strings.Cut(string(k), sep)
				return chartctl.DumpRecord{Quota: &chartctl.ScopedQuota{Scope: scope, Name: name,
					Quota: chartctl.Quota{MaxBytes: r.MaxBytes, MaxVersions: r.MaxVersions}}}, nil
			}),
			record(retentionBucket, func(k, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[retentionRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				return chartctl.DumpRecord{Retention: &chartctl.RepositoryRetention{Repository: string(k), Policy: r.domain()}}, nil
			}),
			record(policiesBucket, func(k, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[policyRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				scope, id, _ := strings.Cut(string(k), sep)
				return chartctl.DumpRecord{Policy: &chartctl.ScopedPolicy{Scope: scope, ID: id, Policy: r.domain()}}, nil
			}),
			record(replicationsBucket, func(_, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[replicationRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				return chartctl.DumpRecord{Replication: r.domain()}, nil
			}),
			record(webhooksBucket, func(_, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[webhookRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				return chartctl.DumpRecord{Webhook: r.domain()}, nil
			}),
			record(ociBlobLinksBucket, func(k, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[ociBlobLinkRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				name, digest, _ := strings.Cut(string(k), sep)
				return chartctl.DumpRecord{OCIBlobLink: &chartctl.OCIBlobLink{Name: name, Digest: digest, Size: r.Size, LinkedAt: r.LinkedAt}}, nil
			}),
			record(ociManifestsBucket, func(k, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[ociManifestRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				return chartctl.DumpRecord{OCIManifest: r.domain(bucket(tx, ociManifestContentBucket).Get(k))}, nil
			}),
			record(ociTagsBucket, func(k, v []byte) (chartctl.DumpRecord, error) {
				name, tag, _ := strings.Cut(string(k), sep)
				return chartctl.DumpRecord{OCITag: &chartctl.OCITag{Name: name, Tag: tag, Digest: string(bytes.Clone(v))}}, nil
			}),
			// Keys are sequence numbers: oldest first.
			record(auditBucket, func(_, v []byte) (chartctl.DumpRecord, error) {
				r, err := decode[auditRecord](v)
				if err != nil {
					return chartctl.DumpRecord{}, err
				}
				return chartctl.DumpRecord{AuditEntry: r.domain()}, nil
			}),
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return err
			}
		}
		return nil
	})
	return wrap("export", err)
}
