package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// policyRecord is an admission policy's JSON document.
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

// policyTable returns the table and key column of scope's policies.
func policyTable(scope string) (table, col, owners string, err error) {
	switch scope {
	case chartctl.PolicyRepository:
		return "repository_policies", "repository_id", "repositories", nil
	case chartctl.PolicyOrganization:
		return "organization_policies", "organization_id", "organizations", nil
	}
	return "", "", "", chartctl.Invalid("scope", "Unknown policy scope %q.", scope)
}

// Policy returns the admission policy of the repository or organization
// with id, nil if it set none.
func (db *DB) Policy(ctx context.Context, scope, id string) (*chartctl.Policy, error) {
	table, col, _, err := policyTable(scope)
	if err != nil {
		return nil, err
	}
	var b []byte
	err = db.pool.QueryRow(ctx, `SELECT policy FROM `+table+` WHERE `+col+` = $1`, id).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, db.wrap("read policy", err)
	}
	var r policyRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("policy of %s: %w", id, err)
	}
	p := r.domain()
	return &p, nil
}

// SetPolicy replaces the admission policy of the repository or
// organization with id; nil removes it.
func (db *DB) SetPolicy(ctx context.Context, scope, id string, p *chartctl.Policy) error {
	table, col, owners, err := policyTable(scope)
	if err != nil {
		return err
	}
	return db.mutate(ctx, "set policy", func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+owners+` WHERE id = $1`, id).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return chartctl.Errorf(chartctl.ENOTFOUND, "No %s has ID %q.", scope, id)
		}
		if p == nil {
			_, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE `+col+` = $1`, id)
			return err
		}
		b, err := json.Marshal(&policyRecord{RequireSignature: p.RequireSignature, HoldWindow: p.HoldWindow, Lint: p.Lint,
			ValuesSchema: p.ValuesSchema, RequiredFields: p.RequiredFields, NamePattern: text(p.NamePattern),
			AllowPrerelease: p.AllowPrerelease, MonotonicVersions: p.MonotonicVersions, ImagesPinned: p.ImagesPinned,
			MaxSize: p.MaxSize, DenyFiles: p.DenyFiles, UpdatedAt: p.UpdatedAt.UTC()})
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO `+table+` (`+col+`, policy) VALUES ($1, $2)
			ON CONFLICT (`+col+`) DO UPDATE SET policy = EXCLUDED.policy`, id, string(b))
		return err
	})
}

// Policies returns every stored admission policy.
func (db *DB) Policies(ctx context.Context) ([]chartctl.ScopedPolicy, error) {
	var out []chartctl.ScopedPolicy
	for _, scope := range []string{chartctl.PolicyOrganization, chartctl.PolicyRepository} {
		table, col, _, _ := policyTable(scope)
		rows, err := db.pool.Query(ctx, `SELECT `+col+`, policy FROM `+table+` ORDER BY `+col)
		if err != nil {
			return nil, db.wrap("list policies", err)
		}
		var (
			id string
			b  []byte
		)
		_, err = pgx.ForEachRow(rows, []any{&id, &b}, func() error {
			var r policyRecord
			if err := json.Unmarshal(b, &r); err != nil {
				return fmt.Errorf("policy of %s: %w", id, err)
			}
			out = append(out, chartctl.ScopedPolicy{Scope: scope, ID: id, Policy: r.domain()})
			return nil
		})
		if err != nil {
			return nil, db.wrap("list policies", err)
		}
	}
	return out, nil
}
