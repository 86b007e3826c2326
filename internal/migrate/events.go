package migrate

import (
	"context"
	"fmt"
	"slices"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// copyEvents copies what issue #18 added, after the charts (a quota the
// source already exceeds must not refuse them): quotas, retention
// policies, webhooks, download counters and the audit log. Each part is
// safe to run again: quotas and policies are set (not added), a webhook
// already there is skipped, a counter is raised only by what the target
// lacks, and the audit log is copied in one transaction, only into a
// target that has none.
func (m *Migration) copyEvents(ctx context.Context) error {
	orgs, err := m.Src.Organizations(ctx)
	if err != nil {
		return err
	}
	repos, err := m.Src.Repositories(ctx)
	if err != nil {
		return err
	}
	type scope struct{ kind, name, repo, org string }
	scopes := []scope{{}}
	for _, o := range orgs {
		scopes = append(scopes, scope{chartctl.QuotaOrganization, o.Name, "", o.Name})
	}
	for _, r := range repos {
		scopes = append(scopes, scope{chartctl.QuotaRepository, r.Name, r.Name, ""})
	}
	for i, sc := range scopes {
		m.bar("quotas and webhooks", i, len(scopes))
		if sc.kind != "" {
			q, _, err := m.Src.Quota(ctx, sc.kind, sc.name)
			if err != nil {
				return fmt.Errorf("quota of %s %s: %w", sc.kind, sc.name, err)
			}
			if q.MaxBytes != nil || q.MaxVersions != nil {
				if err := m.Dst.SetQuota(ctx, sc.kind, sc.name, q); err != nil {
					return fmt.Errorf("quota of %s %s: %w", sc.kind, sc.name, err)
				}
				m.sum.Quotas++
			}
		}
		hooks, err := m.Src.Webhooks(ctx, sc.repo, sc.org)
		if err != nil {
			return err
		}
		for _, w := range hooks {
			cp := *w
			if err := m.Dst.CreateWebhook(ctx, &cp); err != nil && !exists(err) {
				return fmt.Errorf("webhook %s: %w", w.ID, err)
			}
			m.sum.Webhooks++
		}
	}
	m.bar("quotas and webhooks", len(scopes), len(scopes))

	policies, err := m.Src.RetentionPolicies(ctx)
	if err != nil {
		return err
	}
	for repo, p := range policies {
		if err := m.Dst.SetRetentionPolicy(ctx, repo, p); err != nil {
			return fmt.Errorf("retention policy of %s: %w", repo, err)
		}
		m.sum.Policies++
	}

	for i, r := range repos {
		m.bar("download counters", i, len(repos))
		if err := m.copyDownloads(ctx, r.Name); err != nil {
			return fmt.Errorf("download counters of %s: %w", r.Name, err)
		}
	}
	m.bar("download counters", len(repos), len(repos))
	return m.copyAudit(ctx)
}

// copyDownloads raises the target's counters of repo's versions to the
// source's.
func (m *Migration) copyDownloads(ctx context.Context, repo string) error {
	src, err := m.Src.ChartVersions(ctx, repo, chartctl.ChartFilter{})
	if err != nil {
		return err
	}
	dst, err := m.Dst.ChartVersions(ctx, repo, chartctl.ChartFilter{})
	if err != nil {
		return err
	}
	have := map[string]int64{}
	for _, cv := range dst {
		have[cv.Name+"\x00"+cv.Version] = cv.Downloads
	}
	var counts []chartctl.DownloadCount
	for _, cv := range src {
		if n := cv.Downloads - have[cv.Name+"\x00"+cv.Version]; n > 0 && cv.LastDownloadedAt != nil {
			counts = append(counts, chartctl.DownloadCount{Repository: repo, Name: cv.Name, Version: cv.Version,
				Count: n, Last: *cv.LastDownloadedAt})
		}
	}
	if len(counts) == 0 {
		return nil
	}
	return m.Dst.AddDownloads(ctx, counts)
}

// copyAudit copies the whole audit log, oldest first, in one call (one
// transaction), unless the target already has entries.
func (m *Migration) copyAudit(ctx context.Context) error {
	if got, _, err := m.Dst.AuditLog(ctx, chartctl.AuditFilter{Limit: 1}); err != nil || len(got) > 0 {
		return err
	}
	var all []*chartctl.AuditEntry
	cursor := ""
	for {
		page, next, err := m.Src.AuditLog(ctx, chartctl.AuditFilter{Limit: 100, Cursor: cursor})
		if err != nil {
			return err
		}
		all = append(all, page...)
		if next == "" {
			break
		}
		cursor = next
	}
	if len(all) == 0 {
		return nil
	}
	slices.Reverse(all)
	for _, e := range all {
		e.ID = ""
	}
	if err := m.Dst.AppendAudit(ctx, all...); err != nil {
		return err
	}
	m.sum.Audit = len(all)
	return nil
}
