package server

import (
	"encoding/json"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartdiff"
)

// This file converts domain records to the /v1 wire types. Timestamps leave
// in UTC with second precision (§1).

func ts(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

func tsp(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := ts(*t)
	return &v
}

func toRepository(r *chartctl.Repository) client.Repository {
	out := client.Repository{ID: r.ID, Name: r.Name, Description: r.Description, Visibility: string(r.Visibility),
		IndexFormat: string(r.IndexFormat.OrYAML()), CreatedAt: ts(r.CreatedAt)}
	if r.Organization != "" {
		org := r.Organization
		out.Organization = &org
	}
	if m := r.Mirror; m != nil {
		out.Mirror = &client.RepositoryMirror{URL: m.URL, Interval: app.FormatDuration(m.Interval), Username: m.Username,
			LastSyncAt: tsp(m.LastSyncAt), Status: string(m.Status)}
		if m.Status == chartctl.MirrorError {
			out.Mirror.Error = m.Error
		}
	}
	if px := r.Proxy; px != nil {
		out.Proxy = &client.RepositoryProxy{URL: px.URL, Username: px.Username, TTL: app.FormatDuration(px.TTL),
			Retention: app.FormatDuration(px.EffectiveRetention()),
			Include:   emptyIfNil(px.Include), Exclude: emptyIfNil(px.Exclude), UpstreamStatus: client.ProxyUpstreamUnknown}
	}
	return out
}

func toChart(cv *chartctl.ChartVersion) client.Chart {
	img := chartdiff.VersionImages(cv)
	return client.Chart{Name: cv.Name, Version: cv.Version, Description: cv.Description, AppVersion: cv.AppVersion,
		Digest: cv.Digest, Size: cv.Size, Keywords: cv.Keywords, CreatedAt: ts(cv.CreatedAt), Downloads: cv.Downloads,
		Images: emptyIfNil(img.Images), ImagesSource: img.Source, ImagesError: img.Error,
		Verification: toVerification(cv.Verification), Held: cv.Held(), HeldUntil: tsp(cv.HeldUntil), Policy: versionPolicyOf(cv)}
}

func toUpload(cv *chartctl.ChartVersion) client.ChartUpload {
	return client.ChartUpload{Name: cv.Name, Version: cv.Version, Digest: cv.Digest, Size: cv.Size, CreatedAt: ts(cv.CreatedAt),
		Held: cv.Held(), HeldUntil: tsp(cv.HeldUntil)}
}

func toOrganization(o *chartctl.Organization) client.Organization {
	return client.Organization{ID: o.ID, Name: o.Name, Description: o.Description, CreatedAt: ts(o.CreatedAt)}
}

func toTeam(t *chartctl.Team) client.Team {
	groups := t.IDPGroups
	if groups == nil {
		groups = []string{}
	}
	return client.Team{ID: t.ID, Name: t.Name, Description: t.Description, MemberCount: t.MemberCount, Organization: t.Organization, IDPGroups: groups}
}

func toMember(m *chartctl.Member) client.Member {
	return client.Member{ID: m.ID, Email: m.Email, Role: string(m.Role), AddedAt: ts(m.AddedAt)}
}

func toAPIKey(k *chartctl.APIKey) client.APIKey {
	return client.APIKey{ID: k.ID, Name: k.Name, Scopes: k.Scopes.Strings(), CreatedAt: ts(k.CreatedAt), LastUsedAt: tsp(k.LastUsedAt), ExpiresAt: tsp(k.ExpiresAt),
		Repositories: k.Repositories}
}

func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// toChartDetail is toChart plus the Chart.yaml fields only the single
// version's response carries.
func toChartDetail(cv *chartctl.ChartVersion) client.Chart {
	out := toChart(cv)
	var md struct {
		Home        string              `json:"home"`
		Sources     []string            `json:"sources"`
		Maintainers []client.Maintainer `json:"maintainers"`
	}
	if json.Unmarshal(cv.Metadata, &md) == nil {
		out.Home, out.Sources, out.Maintainers = md.Home, md.Sources, md.Maintainers
	}
	return out
}
