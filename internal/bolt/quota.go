package bolt

import (
	"context"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/text"
)

// Buckets of quotas and usage.
const (
	// quotasBucket: scope sep name → quotaRecord.
	quotasBucket = "quotas"
	// usageBucket: scope sep name → usageRecord, kept current by every
	// chart write; a missing key is computed from the records on first
	// use (data written before quotas existed).
	usageBucket = "usage"
)

type quotaRecord struct {
	MaxBytes    *int64 `json:"max_bytes,omitempty"`
	MaxVersions *int64 `json:"max_versions,omitempty"`
}

// quota is the record as the store's callers see it.
func (r *quotaRecord) quota() chartctl.Quota {
	return chartctl.Quota{MaxBytes: r.MaxBytes, MaxVersions: r.MaxVersions}
}

type usageRecord struct {
	Bytes    int64 `json:"bytes"`
	Versions int64 `json:"versions"`
}

func chartBytes(r *chartRecord) int64 { return r.Size + r.ProvSize }

// usage returns the usage of a repository or organization, computing and
// storing it when missing.
func usage(tx *bbolt.Tx, scope, name string) (*usageRecord, error) {
	k := key(scope, name)
	if v := bucket(tx, usageBucket).Get(k); v != nil {
		return decode[usageRecord](v)
	}
	u := &usageRecord{}
	switch scope {
	case chartctl.QuotaRepository:
		if rr, err := getRepo(tx, name); err == nil && rr.Proxy != nil {
			// A proxy's cache counts against no quota (decision 12).
			break
		}
		if cb := bucket(tx, chartsBucket).Bucket([]byte(name)); cb != nil {
			if err := cb.ForEach(func(_, v []byte) error {
				r, err := decode[chartRecord](v)
				if err != nil {
					return err
				}
				u.Bytes += chartBytes(r)
				u.Versions++
				return nil
			}); err != nil {
				return nil, err
			}
		}
	case chartctl.QuotaOrganization:
		if err := bucket(tx, reposBucket).ForEach(func(_, v []byte) error {
			r, err := decode[repoRecord](v)
			if err != nil || r.Organization != name {
				return err
			}
			ru, err := usage(tx, chartctl.QuotaRepository, r.Name)
			if err != nil {
				return err
			}
			u.Bytes += ru.Bytes
			u.Versions += ru.Versions
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return u, putUsage(tx, scope, name, u)
}

func putUsage(tx *bbolt.Tx, scope, name string, u *usageRecord) error {
	val, err := encode(u)
	if err != nil {
		return err
	}
	return bucket(tx, usageBucket).Put(key(scope, name), val)
}

func getQuota(tx *bbolt.Tx, scope, name string) (*quotaRecord, error) {
	v := bucket(tx, quotasBucket).Get(key(scope, name))
	if v == nil {
		return &quotaRecord{}, nil
	}
	return decode[quotaRecord](v)
}

// charge adds dBytes and dVersions to the usage of repo and of its
// organization. Growth past a quota is EQUOTA and changes nothing.
//
// A proxy repository's cache is not charged (CONTRACT §18 decision 12):
// its fills are never refused for a quota and its evictions free nothing
// that was counted.
func charge(tx *bbolt.Tx, repo *repoRecord, dBytes, dVersions int64) error {
	if repo.Proxy != nil {
		return nil
	}
	scopes := [][2]string{{chartctl.QuotaRepository, repo.Name}}
	if repo.Organization != "" {
		scopes = append(scopes, [2]string{chartctl.QuotaOrganization, repo.Organization})
	}
	var us []*usageRecord
	for _, sc := range scopes {
		u, err := usage(tx, sc[0], sc[1])
		if err != nil {
			return err
		}
		if dBytes > 0 || dVersions > 0 {
			q, err := getQuota(tx, sc[0], sc[1])
			if err != nil {
				return err
			}
			if q.MaxBytes != nil && dBytes > 0 {
				// Chart bytes are a counter; OCI artifacts are counted
				// from their records (ociquota.go).
				oci, err := scopeOCIBytes(tx, sc[0], sc[1])
				if err != nil {
					return err
				}
				if used := u.Bytes + oci; used+dBytes > *q.MaxBytes {
					return quotaError(sc[0], sc[1], "max_bytes", fmt.Sprintf("%d bytes", *q.MaxBytes),
						fmt.Sprintf("%d bytes used; this upload needs %d more", used, dBytes))
				}
			}
			if q.MaxVersions != nil && dVersions > 0 && u.Versions+dVersions > *q.MaxVersions {
				return quotaError(sc[0], sc[1], "max_versions", text.Count(*q.MaxVersions, "chart version", "chart versions"),
					fmt.Sprintf("%d stored", u.Versions))
			}
		}
		us = append(us, u)
	}
	for i, sc := range scopes {
		us[i].Bytes += dBytes
		us[i].Versions += dVersions
		if err := putUsage(tx, sc[0], sc[1], us[i]); err != nil {
			return err
		}
	}
	return nil
}

func quotaError(scope, name, which, limit, use string) error {
	return chartctl.Errorf(chartctl.EQUOTA, "Quota exceeded: the %s quota of %s %q is %s, with %s. Delete chart versions or OCI artifacts, or ask an admin to raise the quota.",
		which, scope, name, limit, use)
}

func checkScope(tx *bbolt.Tx, scope, name string) error {
	switch scope {
	case chartctl.QuotaRepository:
		_, err := getRepo(tx, name)
		return err
	case chartctl.QuotaOrganization:
		if bucket(tx, orgsBucket).Get([]byte(name)) == nil {
			return orgNotFound(name)
		}
		return nil
	}
	return chartctl.Invalid("scope", "Unknown quota scope %q.", scope)
}

// Quota returns a quota and its usage. It reads in a read-only
// transaction once the scope's usage is stored, and only the first time,
// when the usage is counted and stored, in a write one.
func (db *DB) Quota(ctx context.Context, scope, name string) (chartctl.Quota, chartctl.Usage, error) {
	var (
		q      chartctl.Quota
		u      chartctl.Usage
		stored bool
	)
	read := func(tx *bbolt.Tx) error {
		if err := checkScope(tx, scope, name); err != nil {
			return err
		}
		if !tx.Writable() && bucket(tx, usageBucket).Get(key(scope, name)) == nil {
			return nil
		}
		stored = true
		qr, err := getQuota(tx, scope, name)
		if err != nil {
			return err
		}
		ur, err := usage(tx, scope, name)
		if err != nil {
			return err
		}
		oci, err := scopeOCIBytes(tx, scope, name)
		if err != nil {
			return err
		}
		q = qr.quota()
		u = chartctl.Usage{Bytes: ur.Bytes + oci, Versions: ur.Versions}
		return nil
	}
	err := db.db.View(read)
	if err == nil && !stored {
		err = db.db.Update(read)
	}
	return q, u, wrap("get quota", err)
}

// QuotaLimits returns a quota without its usage: one read.
func (db *DB) QuotaLimits(ctx context.Context, scope, name string) (chartctl.Quota, error) {
	var q chartctl.Quota
	err := db.db.View(func(tx *bbolt.Tx) error {
		if err := checkScope(tx, scope, name); err != nil {
			return err
		}
		qr, err := getQuota(tx, scope, name)
		if err != nil {
			return err
		}
		q = qr.quota()
		return nil
	})
	return q, wrap("get quota", err)
}

// SetQuota replaces a quota.
func (db *DB) SetQuota(ctx context.Context, scope, name string, q chartctl.Quota) error {
	return wrap("set quota", db.update(ctx, func(tx *bbolt.Tx) error {
		if err := checkScope(tx, scope, name); err != nil {
			return err
		}
		if scope == chartctl.QuotaRepository && q.RepositoryID != "" {
			if repo, err := getRepo(tx, name); err != nil {
				return err
			} else if repo.ID != q.RepositoryID {
				return repoNotFound(name)
			}
		}
		if q.MaxBytes == nil && q.MaxVersions == nil {
			return bucket(tx, quotasBucket).Delete(key(scope, name))
		}
		val, err := encode(&quotaRecord{MaxBytes: q.MaxBytes, MaxVersions: q.MaxVersions})
		if err != nil {
			return err
		}
		return bucket(tx, quotasBucket).Put(key(scope, name), val)
	}))
}

// dropRepoUsage removes a deleted repository's quota and usage and takes
// its usage off its organization's.
func dropRepoUsage(tx *bbolt.Tx, repo *repoRecord) error {
	u, err := usage(tx, chartctl.QuotaRepository, repo.Name)
	if err != nil {
		return err
	}
	if repo.Organization != "" {
		if err := charge(tx, &repoRecord{Name: repo.Name, Organization: repo.Organization}, -u.Bytes, -u.Versions); err != nil {
			return err
		}
	}
	if err := bucket(tx, usageBucket).Delete(key(chartctl.QuotaRepository, repo.Name)); err != nil {
		return err
	}
	return bucket(tx, quotasBucket).Delete(key(chartctl.QuotaRepository, repo.Name))
}
