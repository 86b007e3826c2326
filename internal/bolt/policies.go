package bolt

import (
	"context"
	"strings"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// policiesBucket: scope sep repository or organization ID → policyRecord
// (admission policies, bound to their owner's ID: decision 2).
const policiesBucket = "policies"

type policyRecord struct {
	RequireSignature  string        `json:"require_signature,omitempty"`
	HoldWindow        time.Duration `json:"hold_window,omitempty"`
	Lint              string        `json:"lint,omitempty"`
	ValuesSchema      bool          `json:"values_schema,omitempty"`
	RequiredFields    []string      `json:"required_fields,omitempty"`
	NamePattern       string        `json:"name_pattern,omitempty"`
	AllowPrerelease   bool          `json:"allow_prerelease"`
	MonotonicVersions bool          `json:"monotonic_versions,omitempty"`
	ImagesPinned      bool          `json:"images_pinned,omitempty"`
	MaxSize           int64         `json:"max_size,omitempty"`
	DenyFiles         []string      `json:"deny_files,omitempty"`
	UpdatedAt         time.Time     `json:"updated_at"`
}

func (r *policyRecord) domain() chartctl.Policy {
	return chartctl.Policy{RequireSignature: r.RequireSignature, HoldWindow: r.HoldWindow, Lint: r.Lint,
		ValuesSchema: r.ValuesSchema, RequiredFields: r.RequiredFields, NamePattern: r.NamePattern,
		AllowPrerelease: r.AllowPrerelease, MonotonicVersions: r.MonotonicVersions, ImagesPinned: r.ImagesPinned,
		MaxSize: r.MaxSize, DenyFiles: r.DenyFiles, UpdatedAt: r.UpdatedAt}
}

func policyRecordOf(p *chartctl.Policy) *policyRecord {
	return &policyRecord{RequireSignature: p.RequireSignature, HoldWindow: p.HoldWindow, Lint: p.Lint,
		ValuesSchema: p.ValuesSchema, RequiredFields: p.RequiredFields, NamePattern: p.NamePattern,
		AllowPrerelease: p.AllowPrerelease, MonotonicVersions: p.MonotonicVersions, ImagesPinned: p.ImagesPinned,
		MaxSize: p.MaxSize, DenyFiles: p.DenyFiles, UpdatedAt: p.UpdatedAt.UTC()}
}

// Policy returns the admission policy of the repository or organization
// with id, nil if it set none.
func (db *DB) Policy(ctx context.Context, scope, id string) (*chartctl.Policy, error) {
	var out *chartctl.Policy
	err := db.db.View(func(tx *bbolt.Tx) error {
		v := bucket(tx, policiesBucket).Get(key(scope, id))
		if v == nil {
			return nil
		}
		r, err := decode[policyRecord](v)
		if err != nil {
			return err
		}
		p := r.domain()
		out = &p
		return nil
	})
	return out, wrap("read policy", err)
}

// SetPolicy replaces the admission policy of the repository or
// organization with id; nil removes it.
func (db *DB) SetPolicy(ctx context.Context, scope, id string, p *chartctl.Policy) error {
	return wrap("set policy", db.update(ctx, func(tx *bbolt.Tx) error {
		var err error
		switch scope {
		case chartctl.PolicyRepository:
			_, err = repoByID(tx, id)
		case chartctl.PolicyOrganization:
			_, err = orgByID(tx, id)
		default:
			return chartctl.Invalid("scope", "Unknown policy scope %q.", scope)
		}
		if err != nil {
			return err
		}
		b := bucket(tx, policiesBucket)
		if p == nil {
			return b.Delete(key(scope, id))
		}
		val, err := encode(policyRecordOf(p))
		if err != nil {
			return err
		}
		return b.Put(key(scope, id), val)
	}))
}

// Policies returns every stored admission policy.
func (db *DB) Policies(ctx context.Context) ([]chartctl.ScopedPolicy, error) {
	var out []chartctl.ScopedPolicy
	err := db.db.View(func(tx *bbolt.Tx) error {
		return bucket(tx, policiesBucket).ForEach(func(k, v []byte) error {
			scope, id, _ := strings.Cut(string(k), sep)
			r, err := decode[policyRecord](v)
			if err != nil {
				return err
			}
			out = append(out, chartctl.ScopedPolicy{Scope: scope, ID: id, Policy: r.domain()})
			return nil
		})
	})
	return out, wrap("list policies", err)
}

// deletePolicy drops the policy bound to a deleted repository or
// organization.
func deletePolicy(tx *bbolt.Tx, scope, id string) error {
	return bucket(tx, policiesBucket).Delete(key(scope, id))
}

// upgradePolicies (13→14): admission policies live in a bucket of their
// own, created at open and empty; only the version changes. A binary of
// schema 9 would accept every chart a policy refuses and leave policies
// behind when it deletes their repository.
func upgradePolicies(*bbolt.Tx) error { return nil }
