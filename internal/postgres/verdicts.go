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
