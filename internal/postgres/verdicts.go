package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// versionPolicyJSON is the policy column of chart_versions; the names
// match bolt's record, so both stores read alike.
type versionPolicyJSON struct {
	Findings  []findingJSON `json:"findings,omitempty"`
	CheckedAt time.Time     `json:"checked_at"`
	PolicyAt  time.Time     `json:"policy_at,omitzero"`
}

type findingJSON struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

func encodeVersionPolicy(p *chartctl.VersionPolicy) ([]byte, error) {
	if p == nil {
		return nil, nil
	}
	j := versionPolicyJSON{CheckedAt: p.CheckedAt.UTC(), PolicyAt: p.PolicyAt.UTC()}
	for _, f := range p.Findings {
		j.Findings = append(j.Findings, findingJSON(f))
	}
	return json.Marshal(j)
}

func decodeVersionPolicy(b []byte) (*chartctl.VersionPolicy, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var j versionPolicyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, err
	}
	p := &chartctl.VersionPolicy{CheckedAt: j.CheckedAt.UTC(), PolicyAt: j.PolicyAt.UTC()}
	if j.PolicyAt.IsZero() {
		p.PolicyAt = time.Time{}
	}
	for _, f := range j.Findings {
		p.Findings = append(p.Findings, chartctl.Finding(f))
	}
	return p, nil
}

// SetVersionPolicy implements chartctl.PolicyStore.
func (db *DB) SetVersionPolicy(ctx context.Context, repo, name, version, digest string, p *chartctl.VersionPolicy) error {
	if !storable(repo, name, version, digest) {
		return chartNotFound(repo, name, version)
	}
	val, err := encodeVersionPolicy(p)
	if err != nil {
		return err
	}
	return db.setVersionColumn(ctx, "set version policy", "policy", "it was being checked", repo, name, version, digest, val)
}

// setVersionColumn sets column (a constant of the caller's) of repo's
// chart name version to val, if the version still holds the archive
// digest; while says what was being done, for the error when it was
// replaced meanwhile. op names the operation in a store error.
func (db *DB) setVersionColumn(ctx context.Context, op, column, while, repo, name, version, digest string, val any) error {
	err := db.changing(ctx, func(q querier) error {
		tag, err := q.Exec(ctx, `UPDATE chart_versions c SET `+column+` = $5
			FROM repositories r
			WHERE r.id = c.repository_id AND r.name = $1 AND c.name = $2 AND c.version = $3 AND c.digest = $4`,
			repo, name, version, digest, val)
		if err == nil && tag.RowsAffected() == 0 {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Chart %s version %s not found in repository %q, or replaced while %s.", name, version, repo, while)
		}
		return err
	})
	return db.wrap(op, err)
}
