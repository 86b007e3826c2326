package bolt

import (
	"context"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Trust material and verification records (issue #30).
const (
	prefixTrust = "trust_"
	// trustBucket: scope sep scope ID sep entry name → trustRecord; a
	// repository's or organization's entries by name with one prefix scan.
	trustBucket = "trust"
)

var trustBuckets = []string{trustBucket, chartHeldBucket}

type trustRecord struct {
	ID        string    `json:"id"`
	Scope     string    `json:"scope"`
	ScopeID   string    `json:"scope_id"`
	Name      string    `json:"name"`
	Kind      string    `json:"kind"`
	Key       []byte    `json:"key,omitempty"`
	Issuer    string    `json:"issuer,omitempty"`
	Subject   string    `json:"subject,omitempty"`
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

func (r *trustRecord) domain() *chartctl.TrustEntry {
	return &chartctl.TrustEntry{ID: r.ID, Scope: r.Scope, ScopeID: r.ScopeID, Name: r.Name, Kind: r.Kind,
		Key: r.Key, Issuer: r.Issuer, Subject: r.Subject, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt}
}

// verificationRecord is the "verification" member of a chart record.
type verificationRecord struct {
	Status     string            `json:"status"`
	Signatures []signatureRecord `json:"signatures,omitempty"`
	CheckedAt  time.Time         `json:"checked_at"`
}

type signatureRecord struct {
	Kind       string     `json:"kind"`
	Identity   string     `json:"identity,omitempty"`
	Trust      string     `json:"trust,omitempty"`
	VerifiedAt *time.Time `json:"verified_at,omitempty"`
	Reason     string     `json:"reason,omitempty"`
}

func newVerificationRecord(v *chartctl.Verification) *verificationRecord {
	if v == nil {
		return nil
	}
	r := &verificationRecord{Status: v.Status, CheckedAt: v.CheckedAt}
	for _, s := range v.Signatures {
		r.Signatures = append(r.Signatures, signatureRecord(s))
	}
	return r
}

func (r *verificationRecord) domain() *chartctl.Verification {
	if r == nil {
		return nil
	}
	v := &chartctl.Verification{Status: r.Status, CheckedAt: r.CheckedAt}
	for _, s := range r.Signatures {
		v.Signatures = append(v.Signatures, chartctl.Signature(s))
	}
	return v
}

// trustScopeExists checks the repository or organization id exists.
func trustScopeExists(tx *bbolt.Tx, scope, id string) error {
	switch scope {
	case chartctl.TrustScopeRepository:
		_, err := repoByID(tx, id)
		return err
	case chartctl.TrustScopeOrganization:
		_, err := orgByID(tx, id)
		return err
	}
	return chartctl.Invalid("scope", "Unknown trust scope %q.", scope)
}

// AddTrustEntry implements chartctl.TrustStore.
func (db *DB) AddTrustEntry(ctx context.Context, e *chartctl.TrustEntry) error {
	if err := db.fill(&e.ID, prefixTrust, &e.CreatedAt); err != nil {
		return err
	}
	return wrap("add trust entry", db.update(ctx, func(tx *bbolt.Tx) error {
		if err := trustScopeExists(tx, e.Scope, e.ScopeID); err != nil {
			return err
		}
		k := key(e.Scope, e.ScopeID, e.Name)
		b := bucket(tx, trustBucket)
		if b.Get(k) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "A trust entry named %q already exists here; remove it first or choose another name.", e.Name)
		}
		v, err := encode(&trustRecord{ID: e.ID, Scope: e.Scope, ScopeID: e.ScopeID, Name: e.Name, Kind: e.Kind,
			Key: e.Key, Issuer: e.Issuer, Subject: e.Subject, CreatedBy: e.CreatedBy, CreatedAt: e.CreatedAt})
		if err != nil {
			return err
		}
		return b.Put(k, v)
	}))
}

// TrustEntries implements chartctl.TrustStore.
func (db *DB) TrustEntries(ctx context.Context, scope, scopeID string) ([]*chartctl.TrustEntry, error) {
	var out []*chartctl.TrustEntry
	err := db.db.View(func(tx *bbolt.Tx) error {
		return scanPrefix(bucket(tx, trustBucket), append(key(scope, scopeID), sep...), func(_, v []byte) error {
			r, err := decode[trustRecord](v)
			if err != nil {
				return err
			}
			out = append(out, r.domain())
			return nil
		})
	})
	return out, wrap("list trust entries", err)
}

// DeleteTrustEntry implements chartctl.TrustStore.
func (db *DB) DeleteTrustEntry(ctx context.Context, scope, scopeID, name string) error {
	return wrap("delete trust entry", db.update(ctx, func(tx *bbolt.Tx) error {
		k := key(scope, scopeID, name)
		b := bucket(tx, trustBucket)
		if b.Get(k) == nil {
			return chartctl.Errorf(chartctl.ENOTFOUND, "No trust entry named %q here; `chartctl trust list` shows them.", name)
		}
		return b.Delete(k)
	}))
}

// deleteScopeTrust deletes every trust entry of a repository or
// organization (decision 2: bound to its ID, deleted with it).
func deleteScopeTrust(tx *bbolt.Tx, scope, id string) error {
	var keys [][]byte
	b := bucket(tx, trustBucket)
	if err := scanPrefix(b, append(key(scope, id), sep...), func(k, _ []byte) error {
		keys = append(keys, append([]byte(nil), k...))
		return nil
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// SetVerification implements chartctl.TrustStore.
func (db *DB) SetVerification(ctx context.Context, repo, name, version, digest string, v *chartctl.Verification, indexEntry, indexJSON []byte) error {
	if err := validateChartKey(name, version); err != nil {
		return err
	}
	return wrap("set verification", db.update(ctx, func(tx *bbolt.Tx) error {
		rec, err := editChartRecord(tx, repo, name, version, digest, "it was being verified", func(rec *chartRecord) {
			rec.Verification = newVerificationRecord(v)
		})
		if err != nil {
			return err
		}
		if len(indexEntry) == 0 {
			return nil
		}
		return putIndexEntry(tx, repo, key(name, version), rec.CreatedAt, indexEntry, indexJSON)
	}))
}

// editChartRecord changes the stored record of repo's chart name version
// in tx with edit, if it still holds the archive digest (while says what
// was being done, for the error when it was replaced meanwhile), and
// returns the record as stored.
func editChartRecord(tx *bbolt.Tx, repo, name, version, digest, while string, edit func(*chartRecord)) (*chartRecord, error) {
	k := key(name, version)
	cb := bucket(tx, chartsBucket).Bucket([]byte(repo))
	var val []byte
	if cb != nil {
		val = cb.Get(k)
	}
	if val == nil {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "Chart %s version %s not found in repository %q.", name, version, repo)
	}
	rec, err := decode[chartRecord](val)
	if err != nil {
		return nil, err
	}
	if rec.Digest != digest {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "Chart %s version %s was replaced while %s.", name, version, while)
	}
	edit(rec)
	nv, err := encode(rec)
	if err != nil {
		return nil, err
	}
	return rec, cb.Put(k, nv)
}
