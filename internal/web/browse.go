package web

import (
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartrender"
	"github.com/chartctl/chartctl/internal/text"
)

// This file holds the pages anyone may browse: home and search, the
// repositories, a repository, a chart version. Who sees what is decided by
// internal/app and the domain's Principal methods, exactly as for /v1:
// anonymous visitors see public repositories, signed-in users also what
// their organizations give them, and anything else is the 404 page.

// versionsPerPage is how many versions a chart page lists at a time.
const versionsPerPage = 50

// searchPerPage is how many results a search page shows.
const searchPerPage = 30

// viewer returns the principal of the request: nil for an anonymous
// visitor, else the signed-in user as the API sees them (a session may
// do whatever the user's roles allow).
func (d *Dashboard) viewer(c echo.Context) (*chartctl.Principal, error) {
	u, _ := d.Session(c)
	if u == nil {
		return nil, nil
	}
	return d.opts.Principals.PrincipalFor(c.Request().Context(), u.ID, "web-session", chartctl.AllScopes)
}

// visibleRepo loads the viewer and the repository of the path's :repo
// parameter, answering the request itself (the 404 page) when the viewer
// may not see it; the bool is false then, or on an error.
func (d *Dashboard) visibleRepo(c echo.Context) (*chartctl.Principal, *chartctl.Repository, bool, error) {
	p, err := d.viewer(c)
	if err != nil {
		return nil, nil, false, err
	}
	r, err := d.opts.App.VisibleRepo(c.Request().Context(), p, c.Param("repo"))
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, nil, false, d.notFound(c)
	} else if err != nil {
		return nil, nil, false, err
	}
	return p, r, true, nil
}

// browsePage is the Page of a browsing page: the navigation bar shows for
// anonymous visitors too.
func (d *Dashboard) browsePage(c echo.Context, title, nav, canonical string, data any) Page {
	u, s := d.Session(c)
	p := Page{Title: title, User: u, Nav: nav, Public: true, Data: data, SignIn: signInBack(c, u)}
	if s != nil {
		p.CSRF = s.CSRFToken
	}
	if canonical != "" {
		p.Canonical = d.BaseURL(c) + canonical
	}
	return p
}

// NotFoundPage answers a browser that asked for an address no page has:
// the 404 page, with the pages' security headers.
func (d *Dashboard) NotFoundPage(c echo.Context) error {
	return SecurityHeaders(d.notFound)(c)
}

// notFound renders the 404 page, the same for unknown and invisible
// resources.
func (d *Dashboard) notFound(c echo.Context) error {
	u, s := d.Session(c)
	msg := "There is nothing here that you can see."
	if u == nil {
		// The page may be private: offer to sign in and come back to it.
		msg += " If you expected a private repository, sign in first."
	}
	return d.renderError(c, http.StatusNotFound, u, s, ErrorPage{Heading: "Page not found", Message: msg, Back: "/", SignIn: signInBack(c, u)})
}

// ReposListPage lists the repositories the visitor can see.
type ReposListPage struct {
	Repos []RepoListRow
}

// RepoListRow is one repository in the list.
type RepoListRow struct {
	Name        string
	Description string
	Visibility  chartctl.Visibility
	Owner       string
	Charts      int
	Versions    int
	LastPush    time.Time
}

func (d *Dashboard) handleRepos(c echo.Context) error {
	p, err := d.viewer(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	all, err := d.opts.Store.Repositories(ctx)
	if err != nil {
		return err
	}
	rp := ReposListPage{}
	owners := map[string]string{}
	if p != nil {
		owners[p.User.ID] = "You"
	}
	for _, r := range all {
		if !p.CanSeeRepo(r) {
			continue
		}
		row := RepoListRow{Name: r.Name, Description: r.Description, Visibility: r.Visibility, Owner: d.ownerName(ctx, r, owners)}
		entries, err := d.opts.Store.IndexEntries(ctx, r.Name)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			continue
		} else if err != nil {
			return err
		}
		names := map[string]bool{}
		for _, e := range entries {
			names[e.Name] = true
			if e.CreatedAt.After(row.LastPush) {
				row.LastPush = e.CreatedAt
			}
		}
		row.Charts, row.Versions = len(names), len(entries)
		rp.Repos = append(rp.Repos, row)
	}
	pg := d.browsePage(c, "Repositories", "repos", "/repositories", rp)
	if name := c.QueryParam("deleted"); name != "" && chartctl.ValidateName("repo", name) == nil {
		pg.Flash = "The repository " + name + " was deleted."
	}
	return d.render(c, http.StatusOK, "repos", pg)
}

// ownerName says who owns r: its organization, "You", or the owner's
// email for signed-in visitors (anonymous visitors see no emails).
func (d *Dashboard) ownerName(ctx context.Context, r *chartctl.Repository, known map[string]string) string {
	if r.Organization != "" {
		return r.Organization
	}
	if name, ok := known[r.OwnerID]; ok {
		return name
	}
	name := "A user"
	// known is empty for anonymous visitors, who see no emails.
	if len(known) > 0 {
		if u, err := d.opts.Store.User(ctx, r.OwnerID); err == nil {
			name = u.Email
		}
	}
	known[r.OwnerID] = name
	return name
}

// InstallLines are the commands that install a chart: client.Install's,
// the same the CLI's `chart view` prints.
type InstallLines struct {
	client.InstallLines
	// Search lists the repository's charts (the repository page's line).
	Search string
	// Private says the lines need an API key in $KEY.
	Private bool
	// OCIRepo is the repository's OCI address (oci://HOST/REPO), on the
	// repository page of a server with an OCI registry; PlainHTTP says
	// Helm reaches it with --plain-http.
	OCIRepo   string
	PlainHTTP bool
}

// RepoPage shows one repository and its charts.
type RepoPage struct {
	Repo      *chartctl.Repository
	Owner     string
	HelmURL   string
	Install   InstallLines
	Charts    []ChartRow
	CanManage bool
	BaseURL   string
	// Usage is the storage used against the quota, in words.
	Usage string
	// CanWebhooks is set for maintainers, who manage webhooks.
	CanWebhooks bool
	// CanAccess links the Access tab, for those it shows something to.
	CanAccess bool
	// Mirror is set for a mirror repository; CanSync for maintainers,
	// who may start a sync.
	Mirror  *MirrorView
	CanSync bool
}

// MirrorView is a mirror repository's upstream and sync state.
type MirrorView struct {
	URL      string
	Interval string
	// Status is ok, syncing or error; Error says why, for error.
	Status     string
	Error      string
	LastSyncAt *time.Time
}

func mirrorView(m *chartctl.Mirror) *MirrorView {
	if m == nil {
		return nil
	}
	v := &MirrorView{URL: m.URL, Interval: app.FormatDuration(m.Interval), Status: string(m.Status), LastSyncAt: m.LastSyncAt}
	if m.Status == chartctl.MirrorError {
		v.Error = m.Error
	}
	return v
}

// ChartRow is one chart of a repository: its latest version.
type ChartRow struct {
	Name   string
	Latest string
	// Prerelease says the chart has only pre-releases: Latest is the
	// newest of them, not a latest version in Helm's sense.
	Prerelease  bool
	AppVersion  string
	Description string
	Icon        template.URL
	Initial     string
	Versions    int
	UpdatedAt   time.Time
	URL         string
}

func (d *Dashboard) handleRepo(c echo.Context) error {
	p, r, ok, err := d.visibleRepo(c)
	if !ok {
		return err
	}
	ctx := c.Request().Context()
	latest, err := d.opts.Store.ChartVersions(ctx, r.Name, chartctl.ChartFilter{Latest: true})
	if err != nil {
		return err
	}
	entries, err := d.opts.Store.IndexEntries(ctx, r.Name)
	if err != nil {
		return err
	}
	counts := map[string]int{}
	updated := map[string]time.Time{}
	versionsOf := map[string][]string{}
	for _, e := range entries {
		counts[e.Name]++
		versionsOf[e.Name] = append(versionsOf[e.Name], e.Version)
		if e.CreatedAt.After(updated[e.Name]) {
			updated[e.Name] = e.CreatedAt
		}
	}
	known := map[string]string{}
	if p != nil {
		known[p.User.ID] = "You"
	}
	rp := RepoPage{Repo: r, Owner: d.ownerName(ctx, r, known), HelmURL: d.BaseURL(c) + "/helm/" + r.Name, BaseURL: d.BaseURL(c),
		CanManage: p.RepoRole(r).AtLeast(app.SettingsRole)}
	rp.Install = d.installLines(c, r, "", "")
	if q, u, err := d.opts.Store.Quota(ctx, chartctl.QuotaRepository, r.Name); err == nil {
		rp.Usage = text.Usage(u.Bytes, q.MaxBytes, u.Versions, q.MaxVersions)
	}
	rp.CanWebhooks = p.RepoRole(r).AtLeast(app.SettingsRole)
	rp.CanAccess = app.MaySeeRepoAccess(p, r)
	rp.Mirror, rp.CanSync = mirrorView(r.Mirror), r.Mirror != nil && rp.CanWebhooks
	for _, cv := range latest {
		// The store gives each chart's newest version; the latest is the
		// newest stable one (client.Latest), read when they differ. A
		// chart with only pre-releases shows its newest, marked so.
		pre := false
		if v, ok := client.Latest(versionsOf[cv.Name], false); !ok {
			pre = true
		} else if v != cv.Version {
			if cv, err = d.opts.Store.ChartVersion(ctx, r.Name, cv.Name, v); err != nil {
				return err
			}
		}
		row := ChartRow{Name: cv.Name, Latest: cv.Version, Prerelease: pre, AppVersion: cv.AppVersion, Description: cv.Description,
			Versions: counts[cv.Name], UpdatedAt: updated[cv.Name], URL: chartURL(r.Name, cv.Name, "")}
		row.Icon, row.Initial = chartIcon(cv)
		rp.Charts = append(rp.Charts, row)
	}
	pg := d.browsePage(c, r.Name, "repos", "/repositories/"+r.Name, rp)
	if c.QueryParam("synced") == "1" && r.Mirror != nil {
		pg.Flash = "A sync from " + r.Mirror.URL + " has started; reload the page to see it end."
	}
	return d.render(c, http.StatusOK, "repo", pg)
}

// handleSyncRepo starts a sync of a mirror repository (maintainers).
func (d *Dashboard) handleSyncRepo(c echo.Context) error {
	if err := d.CheckCSRF(c); err != nil {
		return d.refuseCSRF(c, err)
	}
	p, err := d.viewer(c)
	if err != nil {
		return err
	}
	r, err := d.opts.App.RequestSync(c.Request().Context(), p, c.Param("repo"))
	switch chartctl.ErrorCode(err) {
	case "":
	case chartctl.ENOTFOUND:
		return d.notFound(c)
	case chartctl.EFORBIDDEN:
		return d.RenderError(c, http.StatusForbidden, "Not allowed", chartctl.ErrorMessage(err))
	case chartctl.ECONFLICT:
		return d.RenderError(c, http.StatusConflict, "Not a mirror", chartctl.ErrorMessage(err))
	default:
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/repositories/"+url.PathEscape(r.Name)+"?synced=1")
}

// installLines returns the commands for chart name of r at version (""
// for the latest); name "" gives the repository page's lines.
func (d *Dashboard) installLines(c echo.Context, r *chartctl.Repository, name, version string) InstallLines {
	private := r.Visibility != chartctl.VisibilityPublic
	if name == "" {
		l := client.Install(d.BaseURL(c), r.Name, "chart", "", private)
		out := InstallLines{InstallLines: client.InstallLines{RepoAdd: l.RepoAdd}, Search: "helm search repo " + r.Name + "/", Private: private}
		if d.opts.OCI && client.OCIName(r.Name) {
			out.OCIRepo, out.PlainHTTP = client.OCIRepository(d.BaseURL(c), r.Name)
			if private {
				out.RegistryLogin = client.RegistryLogin(d.BaseURL(c))
			}
		}
		return out
	}
	l := client.Install(d.BaseURL(c), r.Name, name, version, private)
	if !d.opts.OCI {
		l.RegistryLogin, l.OCIInstall = "", ""
	}
	return InstallLines{InstallLines: l, Private: private}
}

// ChartPage is a chart version's page.
type ChartPage struct {
	Repo    *chartctl.Repository
	Version *chartctl.ChartVersion
	Page    *chartrender.Page
	// Latest is the latest version's number (client.Latest: the newest
	// stable one), shown by default; IsLatest says this is it.
	// LatestPrerelease says the chart has only pre-releases, so Latest is
	// its newest pre-release, shown for want of a stable one.
	Latest           string
	LatestPrerelease bool
	IsLatest         bool
	// Prerelease marks this version a pre-release: a SemVer pre-release
	// (client.Prerelease) or one its annotations call so.
	Prerelease bool
	// Tab is "readme", "values", "schema" or "templates".
	Tab       string
	Tabs      []Tab
	README    template.HTML
	Values    template.HTML
	Icon      template.URL
	Initial   string
	Install   InstallLines
	Download  string
	Prov      string
	Deps      []DepNode
	Versions  []VersionRow
	Total     int
	MoreURL   string
	PrevURL   string
	PageURL   string
	CanManage bool
	// Verdict is the signature verdict; Images the images the version
	// deploys; Changed what changed since the version before it (nil
	// for the oldest); CompareURL the diff view.
	Verdict    Verdict
	Images     ImagesView
	Changed    *WhatChanged
	CompareURL string
}

// Tab is one of a chart page's tabs.
type Tab struct {
	Name, Label, URL string
	Current          bool
}

// VersionRow is one version in a chart's version list.
type VersionRow struct {
	Version    string
	AppVersion string
	// Downloads counts downloads of this version over every protocol.
	Downloads int64
	CreatedAt time.Time
	URL       string
	Current   bool
	// CompareURL compares this version with the one the page shows.
	CompareURL string
}

func chartURL(repo, name, version string) string {
	u := "/repositories/" + url.PathEscape(repo) + "/charts/" + url.PathEscape(name)
	if version != "" {
		u += "/" + url.PathEscape(version)
	}
	return u
}

// latestVersion returns the latest version of chart name in repo by
// client.Latest (the newest stable one, as Helm and the CLI pick it), or,
// when the chart has only pre-releases, its newest version with pre true.
// first, when given, is the first page of versions (newest first), already
// read by the caller. Versions are read a page at a time, newest first,
// until one is stable: usually the first page.
func (d *Dashboard) latestVersion(ctx context.Context, repo, name string, first []*chartctl.ChartVersion) (latest *chartctl.ChartVersion, pre bool, err error) {
	page := first
	var newest []*chartctl.ChartVersion
	for offset := 0; ; offset += versionsPerPage {
		if page == nil || offset > 0 {
			if page, _, err = d.opts.Store.ChartVersionPage(ctx, repo, chartctl.ChartFilter{Name: name}, offset, versionsPerPage); err != nil {
				return nil, false, err
			}
		}
		if newest == nil {
			newest = page
		}
		if v, ok := client.Latest(versionStrings(page), false); ok {
			return findVersion(page, v), false, nil
		}
		if len(page) < versionsPerPage {
			break
		}
	}
	if len(newest) == 0 {
		return nil, false, nil
	}
	// Only pre-releases (or versions that are not SemVer): the newest.
	if v, ok := client.Latest(versionStrings(newest), true); ok {
		return findVersion(newest, v), true, nil
	}
	return newest[0], true, nil
}

func versionStrings(cvs []*chartctl.ChartVersion) []string {
	out := make([]string, len(cvs))
	for i, cv := range cvs {
		out[i] = cv.Version
	}
	return out
}

func findVersion(cvs []*chartctl.ChartVersion, version string) *chartctl.ChartVersion {
	for _, cv := range cvs {
		if cv.Version == version {
			return cv
		}
	}
	return nil
}

func (d *Dashboard) handleChart(c echo.Context) error {
	p, r, ok, err := d.visibleRepo(c)
	if !ok {
		return err
	}
	ctx := c.Request().Context()
	name, version := c.Param("name"), c.Param("version")
	if chart.ValidateName(name) != nil || (version != "" && chart.ValidateVersion(version) != nil) {
		return d.notFound(c)
	}
	vpage := 1
	if n, err := strconv.Atoi(c.QueryParam("versions")); err == nil && n > 1 && n < 100000 {
		vpage = n
	}
	// One query gives the page of versions and, on the first page, the
	// latest version: sorting a chart's versions is the page's main cost
	// when it has thousands.
	versions, total, err := d.opts.Store.ChartVersionPage(ctx, r.Name, chartctl.ChartFilter{Name: name}, (vpage-1)*versionsPerPage, versionsPerPage)
	if err != nil {
		return err
	}
	if total == 0 {
		return d.notFound(c)
	}
	var first []*chartctl.ChartVersion
	if vpage == 1 {
		first = versions
	}
	latest, latestPre, err := d.latestVersion(ctx, r.Name, name, first)
	if err != nil {
		return err
	}
	if latest == nil {
		return d.notFound(c)
	}
	cv := latest
	if version != "" && version != cv.Version {
		cv = nil
		for _, v := range versions {
			if v.Version == version {
				cv = v
			}
		}
		if cv == nil {
			cv, err = d.opts.Store.ChartVersion(ctx, r.Name, name, version)
			if err == nil {
				// A held version's page is for those who may push only.
				err = d.opts.App.VisibleVersion(ctx, p, cv)
			}
			if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
				return d.notFound(c)
			} else if err != nil {
				return err
			}
		}
	}
	page, err := d.opts.Pages.Get(ctx, cv.Digest)
	if err != nil {
		return err
	}
	self := chartURL(r.Name, name, version)
	cp := ChartPage{Repo: r, Version: cv, Page: page, Latest: latest.Version, LatestPrerelease: latestPre, IsLatest: cv.Version == latest.Version, PageURL: self,
		Prerelease: page.Prerelease || client.Prerelease(cv.Version),
		README:     template.HTML(page.ReadmeHTML), Values: template.HTML(page.ValuesHTML), //nolint:gosec // sanitized when rendered (chartrender)
		Install:   d.installLines(c, r, cv.Name, cv.Version),
		Download:  chartURL(r.Name, cv.Name, cv.Version) + "/download",
		CanManage: p.RepoRole(r).AtLeast(app.SettingsRole)}
	// Sanitized and balanced when rendered (chartrender); the README's
	// references to the chart's own files lead to this version's files.
	cp.README = template.HTML(chartrender.ResolveFileRefs(page.ReadmeHTML, chartURL(r.Name, cv.Name, cv.Version)+"/files")) //nolint:gosec // see above
	if cv.ProvDigest != "" {
		cp.Prov = cp.Download + ".prov"
	}
	cp.Icon, cp.Initial = chartIcon(cv)
	cp.Tab = c.QueryParam("tab")
	for _, t := range []Tab{{Name: "readme", Label: "README"}, {Name: "values", Label: "Values"}, {Name: "schema", Label: "Values schema"}, {Name: "templates", Label: "Templates"}} {
		if t.Name == "schema" && !page.HasSchema {
			continue
		}
		t.URL = self
		if t.Name != "readme" {
			t.URL += "?tab=" + t.Name
		}
		cp.Tabs = append(cp.Tabs, t)
	}
	valid := false
	for i := range cp.Tabs {
		if cp.Tabs[i].Name == cp.Tab {
			valid = true
		}
	}
	if !valid {
		cp.Tab = "readme"
	}
	for i := range cp.Tabs {
		cp.Tabs[i].Current = cp.Tabs[i].Name == cp.Tab
	}
	cp.Deps = d.dependencyTree(c, p, r.Name+"/"+cv.Name+"@"+cv.Version, page.Dependencies)
	cp.Verdict = verdictOf(cv.Verification)
	cp.Images = imagesOf(cv)
	if cp.Changed, err = d.whatChanged(c, p, r, cv, versions); err != nil {
		return err
	}
	cp.CompareURL = diffURL(r.Name, name, "", "", "", "")
	if cp.Changed != nil {
		cp.CompareURL = cp.Changed.DiffURL
	}

	cp.Total = total
	for _, v := range versions {
		cp.Versions = append(cp.Versions, VersionRow{Version: v.Version, AppVersion: v.AppVersion, Downloads: v.Downloads, CreatedAt: v.CreatedAt,
			URL: chartURL(r.Name, name, v.Version), Current: v.Version == cv.Version, CompareURL: diffURL(r.Name, name, v.Version, cv.Version, "", "")})
	}
	pageLink := func(n int) string {
		q := url.Values{"versions": {strconv.Itoa(n)}}
		if cp.Tab != "readme" {
			q.Set("tab", cp.Tab)
		}
		return self + "?" + q.Encode() + "#versions"
	}
	if vpage*versionsPerPage < total {
		cp.MoreURL = pageLink(vpage + 1)
	}
	if vpage > 1 {
		cp.PrevURL = pageLink(vpage - 1)
	}

	canonical := self
	if cp.Tab != "readme" {
		canonical += "?tab=" + cp.Tab
	}
	title := cv.Name + " " + cv.Version + " · " + r.Name
	if version == "" {
		title = cv.Name + " · " + r.Name
	}
	return d.render(c, http.StatusOK, "chart", d.browsePage(c, title, "repos", canonical, cp))
}

// chartIcon returns a chart's icon when it can be shown without loading
// anything from another host (a small data: image), else the initial to
// show instead.
func chartIcon(cv *chartctl.ChartVersion) (template.URL, string) {
	initial := "?"
	if r, _ := utf8.DecodeRuneInString(cv.Name); r != utf8.RuneError {
		initial = strings.ToUpper(string(r))
	}
	var md struct {
		Icon string `json:"icon"`
	}
	if len(cv.Metadata) > 0 && json.Unmarshal(cv.Metadata, &md) == nil {
		if data := chartrender.IconDataURL(md.Icon); data != "" {
			return template.URL(data), initial //nolint:gosec // a checked base64 data: image URL
		}
	}
	return "", initial
}

func (d *Dashboard) handleDownload(c echo.Context) error {
	p, r, ok, err := d.visibleRepo(c)
	if !ok {
		return err
	}
	ctx := c.Request().Context()
	file := c.Param("file")
	prov := strings.HasSuffix(file, ".prov")
	if file != "download" && file != "download.prov" {
		return d.notFound(c)
	}
	cv, err := d.opts.App.ChartVersion(ctx, r, c.Param("name"), c.Param("version"))
	if err == nil {
		// A held version is not pullable, from the dashboard either.
		err = d.opts.App.ServableVersion(ctx, p, cv)
	}
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return d.notFound(c)
	} else if err != nil {
		return err
	}
	digest, name := cv.Digest, cv.Name+"-"+cv.Version+".tgz"
	if prov {
		if cv.ProvDigest == "" {
			return d.notFound(c)
		}
		digest, name = cv.ProvDigest, name+".prov"
	}
	b, err := d.opts.App.Blobs.Open(ctx, digest)
	if err != nil {
		return err
	}
	defer b.Close()
	h := c.Response().Header()
	h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	h.Set("Content-Type", "application/gzip")
	if prov {
		h.Set("Content-Type", "application/pgp-signature")
	}
	h.Set("ETag", `"`+digest+`"`)
	http.ServeContent(c.Response(), c.Request(), "", cv.CreatedAt, b)
	return nil
}
