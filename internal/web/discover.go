package web

import (
	"net/url"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartdiff"
	"github.com/chartctl/chartctl/internal/chartrender"
)

// This file holds what a chart version's page says beyond its own files
// (issues #30 and #33): the signature verdict, the images it deploys,
// what changed since the version before it, and its dependency tree.

// Verdict is a version's signature verdict, from its verification record.
type Verdict struct {
	// Status is "verified", "unverified" or "unsigned".
	Status string
	// Summary is the verdict in words: "Signed by …, verified", "Not
	// signed", "Signed, not verified".
	Summary string
	// Signatures lists every signature found.
	Signatures []SignatureView
}

// SignatureView is one signature of a version.
type SignatureView struct {
	Kind, Identity, Trust string
	Verified              bool
	// Reason says why it did not verify.
	Reason string
}

// signatureKinds names signature kinds for people.
var signatureKinds = map[string]string{
	chartctl.SignatureProvenance: "Helm provenance (PGP)",
	chartctl.SignatureCosign:     "cosign",
	chartctl.SignatureNotation:   "Notation",
}

// verdictOf reads a version's verification record. No record means no
// signature was found, as /v1 reports it (unsigned versions get none).
func verdictOf(v *chartctl.Verification) Verdict {
	if v == nil {
		return Verdict{Status: chartctl.VerificationUnsigned, Summary: "Not signed"}
	}
	out := Verdict{Status: v.Status}
	for _, s := range v.Signatures {
		kind := signatureKinds[s.Kind]
		if kind == "" {
			kind = s.Kind
		}
		out.Signatures = append(out.Signatures, SignatureView{Kind: kind, Identity: s.Identity, Trust: s.Trust, Verified: s.Verified(), Reason: s.Reason})
	}
	switch v.Status {
	case chartctl.VerificationVerified:
		who := v.SignedBy()
		if who == "" {
			who = "a trusted key"
		}
		out.Summary = "Signed by " + who + ", verified"
	case chartctl.VerificationUnverified:
		out.Summary = "Signed, not verified"
	default:
		out.Status = chartctl.VerificationUnsigned
		out.Summary = "Not signed"
	}
	return out
}

// ImagesView is what a version's page says about the images it deploys.
type ImagesView struct {
	Images []string
	// Source is where the list comes from (CONTRACT §18: "annotation",
	// "rendered", "unrenderable", "pending").
	Source string
	// Error says why the list is not known.
	Error string
}

// imagesOf reads the images a version deploys, as /v1 reports them.
func imagesOf(cv *chartctl.ChartVersion) ImagesView {
	img := chartdiff.VersionImages(cv)
	return ImagesView{Images: img.Images, Source: img.Source, Error: img.Error}
}

// WhatChanged is what a version changed since the version before it.
type WhatChanged struct {
	// Previous is the version before; PreviousURL its page; DiffURL the
	// full diff of the two.
	Previous, PreviousURL, DiffURL string
	// Values summarizes the values.yaml diff; ValuesError says why there
	// is none; Files counts the files that differ.
	Values      ValuesView
	ValuesError string
	Files       int
	// Problem says the comparison could not be made.
	Problem string
}

// previousScanPages bounds how many pages of versions previousVersion
// reads looking for a version far down a long list.
const previousScanPages = 20

// previousVersion returns the version of cv's chart that comes right
// before cv in the chart's order (newest first), nil when cv is the
// oldest or lies further down than previousScanPages pages. known, when
// given, is a page of the chart's versions the caller already read: a
// version inside it needs no query (listing a chart's versions sorts
// them all, the chart page's main cost for a chart with thousands).
func (d *Dashboard) previousVersion(c echo.Context, repo string, cv *chartctl.ChartVersion, known []*chartctl.ChartVersion) (*chartctl.ChartVersion, error) {
	for i, v := range known {
		if v.Version == cv.Version && i+1 < len(known) {
			return known[i+1], nil
		}
	}
	ctx := c.Request().Context()
	found := false
	for pg := 0; pg < previousScanPages; pg++ {
		page, _, err := d.opts.Store.ChartVersionPage(ctx, repo, chartctl.ChartFilter{Name: cv.Name}, pg*versionsPerPage, versionsPerPage)
		if err != nil {
			return nil, err
		}
		for _, v := range page {
			if found {
				return v, nil
			}
			found = v.Version == cv.Version
		}
		if len(page) < versionsPerPage {
			return nil, nil
		}
	}
	return nil, nil
}

// whatChanged compares cv with the version before it (known as for
// previousVersion); nil when there is none. A diff that fails is reported on the page, never as its error.
func (d *Dashboard) whatChanged(c echo.Context, p *chartctl.Principal, r *chartctl.Repository, cv *chartctl.ChartVersion, known []*chartctl.ChartVersion) (*WhatChanged, error) {
	prev, err := d.previousVersion(c, r.Name, cv, known)
	if err != nil || prev == nil {
		return nil, err
	}
	wc := &WhatChanged{Previous: prev.Version, PreviousURL: chartURL(r.Name, cv.Name, prev.Version), DiffURL: diffURL(r.Name, cv.Name, prev.Version, cv.Version, "", "")}
	res, err := d.opts.App.DiffCharts(c.Request().Context(), p, r.Name, cv.Name, prev.Version, cv.Version, "")
	if err != nil {
		// A version deleted since the list was read, or an archive that
		// no longer reads: the page still shows, saying so.
		d.opts.Logger.Warn("chart page: compare with the previous version", "repo", r.Name, "chart", cv.Name, "version", cv.Version, "err", err)
		wc.Problem = "The changes since " + prev.Version + " could not be computed right now."
		return wc, nil
	}
	wc.Values = valuesView(res.Values, diffValueKeys)
	wc.ValuesError = res.ValuesError
	wc.Files = len(res.Files)
	return wc, nil
}

// DepNode is a dependency in a version's dependency tree: linked when it
// is a chart of this server the visitor can see, with that chart's own
// dependencies below it.
type DepNode struct {
	chartrender.Dependency
	URL      string
	Children []DepNode
	// Cycle marks a dependency already above it in the tree.
	Cycle bool
}

// Bounds on the dependency tree: how deep it goes and how many nodes
// it shows, whatever the charts declare.
const (
	depTreeDepth = 4
	depTreeNodes = 100
)

// dependencyTree builds the tree of deps (a version's dependencies).
func (d *Dashboard) dependencyTree(c echo.Context, p *chartctl.Principal, self string, deps []chartrender.Dependency) []DepNode {
	budget := depTreeNodes
	return d.depNodes(c, p, deps, map[string]bool{self: true}, 1, &budget)
}

func (d *Dashboard) depNodes(c echo.Context, p *chartctl.Principal, deps []chartrender.Dependency, above map[string]bool, depth int, budget *int) []DepNode {
	var out []DepNode
	for _, dep := range deps {
		if *budget <= 0 {
			break
		}
		*budget--
		n := DepNode{Dependency: dep}
		var cv *chartctl.ChartVersion
		var repo string
		n.URL, repo, cv = d.resolveDependency(c, p, dep)
		if cv != nil && depth < depTreeDepth {
			key := repo + "/" + cv.Name + "@" + cv.Version
			if above[key] {
				n.Cycle = true
			} else if page, err := d.opts.Pages.Get(c.Request().Context(), cv.Digest); err == nil && len(page.Dependencies) > 0 {
				above[key] = true
				n.Children = d.depNodes(c, p, page.Dependencies, above, depth+1, budget)
				delete(above, key)
			}
		}
		out = append(out, n)
	}
	return out
}

// dependencyURL links a dependency to its chart page when its repository
// is a repository of this server that p can see (see resolveDependency).
func (d *Dashboard) dependencyURL(c echo.Context, p *chartctl.Principal, dep chartrender.Dependency) string {
	u, _, _ := d.resolveDependency(c, p, dep)
	return u
}

// resolveDependency finds a dependency among this server's charts that p
// can see. The link goes to the version it pins when that version is
// stored, else to the chart, and is "" when the chart is not there (the
// link would be the 404 page). cv is the version the dependency resolves
// to (the pinned one, or the newest stored version in its range), nil if
// none; repo is its repository.
func (d *Dashboard) resolveDependency(c echo.Context, p *chartctl.Principal, dep chartrender.Dependency) (link, repo string, cv *chartctl.ChartVersion) {
	repo = d.localRepoOf(c, dep.Repository)
	if repo == "" || dep.Name == "" {
		return "", "", nil
	}
	ctx := c.Request().Context()
	r, err := d.opts.App.VisibleRepo(ctx, p, repo)
	if err != nil || chart.ValidateName(dep.Name) != nil {
		return "", "", nil
	}
	v := strings.TrimSpace(dep.Version)
	if chart.ValidateVersion(v) == nil {
		if cv, err := d.opts.Store.ChartVersion(ctx, r.Name, dep.Name, v); err == nil {
			return chartURL(r.Name, dep.Name, cv.Version), r.Name, cv
		}
	}
	page, total, err := d.opts.Store.ChartVersionPage(ctx, r.Name, chartctl.ChartFilter{Name: dep.Name}, 0, versionsPerPage)
	if err != nil || total == 0 {
		return "", "", nil
	}
	return chartURL(r.Name, dep.Name, ""), r.Name, newestInRange(page, v)
}

// newestInRange returns the first (newest) of cvs whose version satisfies
// the constraint rng (Helm's dependency ranges), nil if none does or rng
// does not parse.
func newestInRange(cvs []*chartctl.ChartVersion, rng string) *chartctl.ChartVersion {
	if rng == "" {
		rng = "*"
	}
	con, err := semver.NewConstraint(rng)
	if err != nil {
		return nil
	}
	for _, cv := range cvs {
		if v, err := semver.NewVersion(cv.Version); err == nil && con.Check(v) {
			return cv
		}
	}
	return nil
}

// localRepoOf returns the repository of this server a dependency's
// repository URL names (…/helm/REPO or oci://HOST/REPO on this server's
// host), "" for anything else.
func (d *Dashboard) localRepoOf(c echo.Context, repoURL string) string {
	u, err := url.Parse(strings.TrimSpace(repoURL))
	if err != nil {
		return ""
	}
	base, err := url.Parse(d.BaseURL(c))
	if err != nil || !strings.EqualFold(u.Host, base.Host) {
		return ""
	}
	switch u.Scheme {
	case "http", "https":
		rest, ok := strings.CutPrefix(strings.TrimSuffix(u.Path, "/"), strings.TrimSuffix(base.Path, "/")+"/helm/")
		if !ok || strings.Contains(rest, "/") {
			return ""
		}
		return rest
	case "oci":
		return strings.Trim(u.Path, "/")
	}
	return ""
}
