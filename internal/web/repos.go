package web

import (
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// ReposPage lists the repositories the user can read.
type ReposPage struct {
	Repos []RepoRow
}

// RepoRow is one repository with who owns it, in words.
type RepoRow struct {
	*chartctl.Repository
	// Owner is the organization, "You", or the owning user's email.
	Owner string
}

// RepoPage shows one repository and its charts.
type RepoPage struct {
	Repo    *chartctl.Repository
	HelmURL string
	Charts  []ChartRow
	// Usage is the storage used against the quota, in words.
	Usage string
	// CanManage is set for maintainers, who manage webhooks.
	CanManage bool
}

// ChartRow is one chart with its versions, newest first.
type ChartRow struct {
	Name        string
	Latest      string
	AppVersion  string
	Description string
	Versions    []string
	UpdatedAt   time.Time
	// Downloads adds up the downloads of every version.
	Downloads int64
}

// principal is the signed-in user as the API sees them: a session can do
// whatever the user's roles allow.
func (d *Dashboard) principal(c echo.Context) (*chartctl.Principal, error) {
	u, _ := d.Session(c)
	return d.opts.Principals.PrincipalFor(c.Request().Context(), u.ID, "web-session", chartctl.AllScopes)
}

func (d *Dashboard) handleRepos(c echo.Context) error {
	p, err := d.principal(c)
	if err != nil {
		return err
	}
	all, err := d.opts.Store.Repositories(c.Request().Context())
	if err != nil {
		return err
	}
	rp := ReposPage{}
	emails := map[string]string{p.User.ID: "You"}
	for _, r := range all {
		if !p.CanSeeRepo(r) {
			continue
		}
		owner := r.Organization
		if owner == "" {
			if _, ok := emails[r.OwnerID]; !ok {
				emails[r.OwnerID] = "Another user"
				if u, err := d.opts.Store.User(c.Request().Context(), r.OwnerID); err == nil {
					emails[r.OwnerID] = u.Email
				}
			}
			owner = emails[r.OwnerID]
		}
		rp.Repos = append(rp.Repos, RepoRow{Repository: r, Owner: owner})
	}
	return d.render(c, http.StatusOK, "repos", d.page(c, "Repositories", "repos", "", rp))
}

func (d *Dashboard) handleRepo(c echo.Context) error {
	p, err := d.principal(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	r, err := d.opts.Store.Repository(ctx, c.Param("repo"))
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND || (err == nil && !p.CanSeeRepo(r)) {
		return d.RenderError(c, http.StatusNotFound, "Repository not found", "There is no repository with this name that you can see.")
	} else if err != nil {
		return err
	}
	versions, err := d.opts.Store.ChartVersions(ctx, r.Name, chartctl.ChartFilter{})
	if err != nil {
		return err
	}
	rp := RepoPage{Repo: r, HelmURL: d.BaseURL(c) + "/helm/" + r.Name}
	// Versions come by name, then SemVer descending: the first of each name
	// is its latest.
	for _, v := range versions {
		if n := len(rp.Charts); n > 0 && rp.Charts[n-1].Name == v.Name {
			row := &rp.Charts[n-1]
			row.Versions = append(row.Versions, v.Version)
			row.Downloads += v.Downloads
			if v.CreatedAt.After(row.UpdatedAt) {
				row.UpdatedAt = v.CreatedAt
			}
			continue
		}
		rp.Charts = append(rp.Charts, ChartRow{Name: v.Name, Latest: v.Version, AppVersion: v.AppVersion, Description: v.Description, Versions: []string{v.Version}, UpdatedAt: v.CreatedAt, Downloads: v.Downloads})
	}
	if q, u, err := d.opts.Store.Quota(ctx, chartctl.QuotaRepository, r.Name); err == nil {
		rp.Usage = usageText(q, u)
	}
	rp.CanManage = d.opts.App != nil && p.RepoRole(r).AtLeast(chartctl.RoleMaintainer)
	return d.render(c, http.StatusOK, "repo", d.page(c, r.Name, "repos", "", rp))
}

// usageText says how much of its quota a repository uses: "1.2 MiB of
// 10 MiB, 3 of 50 versions".
func usageText(q chartctl.Quota, u chartctl.Usage) string {
	bytes := app.HumanBytes(u.Bytes)
	if q.MaxBytes != nil {
		bytes += " of " + app.HumanBytes(*q.MaxBytes)
	}
	versions := fmt.Sprintf("%d versions", u.Versions)
	if q.MaxVersions != nil {
		versions = fmt.Sprintf("%d of %d versions", u.Versions, *q.MaxVersions)
	}
	return bytes + ", " + versions
}
