package bolt

import (
	"context"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// versionPolicyRecord is the "policy" member of a chart record (schema
// 15): the version's admission verdict.
type versionPolicyRecord struct {
	Findings  []findingRecord `json:"findings,omitempty"`
	CheckedAt time.Time       `json:"checked_at"`
	PolicyAt  time.Time       `json:"policy_at,omitzero"`
}

type findingRecord struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

func newVersionPolicyRecord(p *chartctl.VersionPolicy) *versionPolicyRecord {
	if p == nil {
		return nil
	}
	r := &versionPolicyRecord{CheckedAt: p.CheckedAt.UTC(), PolicyAt: p.PolicyAt.UTC()}
	for _, f := range p.Findings {
		r.Findings = append(r.Findings, findingRecord(f))
	}
	return r
}

func (r *versionPolicyRecord) domain() *chartctl.VersionPolicy {
	if r == nil {
		return nil
	}
	p := &chartctl.VersionPolicy{CheckedAt: r.CheckedAt, PolicyAt: r.PolicyAt}
	for _, f := range r.Findings {
		p.Findings = append(p.Findings, chartctl.Finding(f))
	}
	return p
}

// SetVersionPolicy implements chartctl.PolicyStore.
func (db *DB) SetVersionPolicy(ctx context.Context, repo, name, version, digest string, p *chartctl.VersionPolicy) error {
	if err := validateChartKey(name, version); err != nil {
		return err
	}
	return wrap("set version policy", db.update(ctx, func(tx *bbolt.Tx) error {
		_, err := editChartRecord(tx, repo, name, version, digest, "it was being checked", func(rec *chartRecord) { rec.Policy = newVersionPolicyRecord(p) })
		return err
	}))
}

// upgradeVersionPolicies (14→15): chart records gain their "policy"
// member at push or when a policy change re-checks them, so nothing is
// rewritten. A binary of schema 14 would drop a version's findings and
// noncompliance when it rewrites the chart record.
func upgradeVersionPolicies(*bbolt.Tx) error { return nil }
