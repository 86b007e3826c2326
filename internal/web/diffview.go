package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartdiff"
)

// This file is the diff view of a chart (CONTRACT §18 "Discovery"): two
// versions picked with a plain GET form (also across repositories), the
// values.yaml structural diff, and every changed file unified or side by
// side. The diff itself is app.DiffCharts, the function behind
// GET /v1/repositories/:repo/charts/:name/diff, so the page, the API and
// `chartctl chart diff` agree and share its cache.

// Bounds on what one diff page shows, so a page stays small whatever two
// charts differ by; the API and the CLI give all of it.
const (
	// diffFileLines is how many lines of one file's diff are shown.
	diffFileLines = 3000
	// diffPageLines is how many diff lines one page shows over all files.
	diffPageLines = 20000
	// diffPickerVersions is how many versions (newest first) the
	// version pickers list.
	diffPickerVersions = 500
	// diffValueKeys is how many keys of each kind the values summary on
	// a chart page lists before saying how many more there are.
	diffValueKeys = 8
)

// DiffPage is a chart's diff view.
type DiffPage struct {
	Repo     *chartctl.Repository
	Name     string
	ChartURL string
	// Action is the form's target (this page's path).
	Action string
	// From and To are the versions compared; ToRepo is the repository of
	// To (the page's repository unless another was picked).
	From, To, ToRepo string
	// View is "unified" or "split".
	View string
	// FromVersions and ToVersions fill the pickers (newest first); Repos
	// are the repositories the visitor can see that hold this chart.
	FromVersions, ToVersions []string
	Repos                    []string
	// Problem says why nothing is compared (a bad or unknown version).
	Problem string
	// Compared is set when the diff below is the answer.
	Compared    bool
	Values      ValuesView
	ValuesError string
	Files       []FileView
	// Truncated says the page stopped showing lines (diffPageLines).
	Truncated bool
	// UnifiedURL and SplitURL switch the view; SwapURL compares the
	// other way round; FromURL and ToURL are the two versions' pages.
	UnifiedURL, SplitURL, SwapURL, FromURL, ToURL string
	// CLI is the command that prints the same diff in a terminal.
	CLI string
}

// ValuesView is the structural diff of values.yaml as the pages show it.
type ValuesView struct {
	Added, Removed []string
	Changed        []ValueChangeView
	// More counts keys left out of a summary (chart page only).
	More int
}

// Empty reports whether no key differs.
func (v ValuesView) Empty() bool { return len(v.Added)+len(v.Removed)+len(v.Changed)+v.More == 0 }

// ValueChangeView is a key whose default changed, its values as YAML-ish
// text.
type ValueChangeView struct {
	Key, From, To string
}

// FileView is one changed file of a diff.
type FileView struct {
	Path   string
	Status string
	// Anchor is the id of its section on the page.
	Anchor string
	// Note replaces the lines for a binary file.
	Note string
	// Lines is the unified view; Rows the side-by-side one (only the
	// one shown is filled).
	Lines []DiffLine
	Rows  []SplitRow
	// Added and Removed count its changed lines.
	Added, Removed int
	// Truncated says only its first lines are shown.
	Truncated bool
}

// DiffLine is one line of a unified diff: Kind is "hunk", "add", "del",
// "ctx" or "note"; Old and New are its line numbers (0: none).
type DiffLine struct {
	Kind     string
	Old, New int
	Text     string
}

// SplitRow is one row of a side-by-side diff: a hunk header, or a line
// of each side (either may be empty).
type SplitRow struct {
	Hunk        string
	Left, Right *DiffLine
}

// valuesView turns chartdiff's values diff into text, keeping at most
// limit keys of each kind (0: all).
func valuesView(v chartdiff.Values, limit int) ValuesView {
	out := ValuesView{}
	take := func(n int) int {
		if limit > 0 && n > limit {
			out.More += n - limit
			return limit
		}
		return n
	}
	out.Added = v.Added[:take(len(v.Added))]
	out.Removed = v.Removed[:take(len(v.Removed))]
	for _, ch := range v.Changed[:take(len(v.Changed))] {
		out.Changed = append(out.Changed, ValueChangeView{Key: ch.Key, From: valueText(ch.From), To: valueText(ch.To)})
	}
	return out
}

// valueText shows a values.yaml leaf as YAML would write it.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if x == "" {
			return `""`
		}
		return x
	case []any:
		if len(x) == 0 {
			return "[]"
		}
	case map[string]any:
		if len(x) == 0 {
			return "{}"
		}
	}
	return fmt.Sprint(v)
}

// parseUnified reads one file's unified diff (chartdiff's output: two
// header lines, then hunks) into lines, at most max of them.
func parseUnified(diff string, max int) (lines []DiffLine, added, removed int, truncated bool) {
	oldN, newN := 0, 0
	for i, l := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		if i < 2 && (strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ")) {
			continue
		}
		var dl DiffLine
		switch {
		case strings.HasPrefix(l, "@@"):
			oldN, newN = hunkStart(l)
			dl = DiffLine{Kind: "hunk", Text: l}
		case strings.HasPrefix(l, "+"):
			dl = DiffLine{Kind: "add", New: newN, Text: l[1:]}
			newN++
			added++
		case strings.HasPrefix(l, "-"):
			dl = DiffLine{Kind: "del", Old: oldN, Text: l[1:]}
			oldN++
			removed++
		case strings.HasPrefix(l, " "):
			dl = DiffLine{Kind: "ctx", Old: oldN, New: newN, Text: l[1:]}
			oldN++
			newN++
		default:
			// "\ No newline at end of file", kept as diff writes it.
			dl = DiffLine{Kind: "note", Text: l}
		}
		if len(lines) >= max {
			truncated = true
			continue
		}
		lines = append(lines, dl)
	}
	return lines, added, removed, truncated
}

// hunkStart reads the first line numbers of "@@ -a,b +c,d @@".
func hunkStart(h string) (oldN, newN int) {
	f := strings.Fields(h)
	if len(f) < 3 {
		return 0, 0
	}
	num := func(s string) int {
		s, _, _ = strings.Cut(s[1:], ",")
		n, _ := strconv.Atoi(s)
		return n
	}
	return num(f[1]), num(f[2])
}

// splitRows pairs a unified diff's lines side by side: within a run of
// changes, the i-th removed line faces the i-th added one.
func splitRows(lines []DiffLine) []SplitRow {
	var rows []SplitRow
	var dels, adds []DiffLine
	flush := func() {
		for i := 0; i < len(dels) || i < len(adds); i++ {
			var r SplitRow
			if i < len(dels) {
				r.Left = &dels[i]
			}
			if i < len(adds) {
				r.Right = &adds[i]
			}
			rows = append(rows, r)
		}
		dels, adds = nil, nil
	}
	for i := range lines {
		l := lines[i]
		switch l.Kind {
		case "del":
			dels = append(dels, l)
		case "add":
			adds = append(adds, l)
		case "hunk":
			flush()
			rows = append(rows, SplitRow{Hunk: l.Text})
		case "note":
			// Belongs to the line before it, on its side; shown on both.
			flush()
			rows = append(rows, SplitRow{Left: &lines[i], Right: &lines[i]})
		default:
			flush()
			rows = append(rows, SplitRow{Left: &lines[i], Right: &lines[i]})
		}
	}
	flush()
	return rows
}

// diffURL is the diff view of chart name of repo comparing from with to
// (of toRepo when it is another repository).
func diffURL(repo, name, from, to, toRepo, view string) string {
	q := url.Values{}
	if from != "" {
		q.Set("from", from)
	}
	if to != "" {
		q.Set("to", to)
	}
	if toRepo != "" && toRepo != repo {
		q.Set("to_repo", toRepo)
	}
	if view == "split" {
		q.Set("view", view)
	}
	u := chartURL(repo, name, "") + "/diff"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// chartVersionList returns the newest versions of chart name in repo,
// newest first, at most diffPickerVersions.
func (d *Dashboard) chartVersionList(c echo.Context, repo, name string) ([]string, error) {
	cvs, _, err := d.opts.Store.ChartVersionPage(c.Request().Context(), repo, chartctl.ChartFilter{Name: name}, 0, diffPickerVersions)
	if err != nil {
		return nil, err
	}
	return versionStrings(cvs), nil
}

// withVersion returns versions with v added at the end when it is not
// among them (a version older than the pickers list).
func withVersion(versions []string, v string) []string {
	if v == "" {
		return versions
	}
	for _, x := range versions {
		if x == v {
			return versions
		}
	}
	return append(versions, v)
}

// reposWithChart returns the repositories p can see that hold chart name.
func (d *Dashboard) reposWithChart(c echo.Context, p *chartctl.Principal, name string) ([]string, error) {
	ctx := c.Request().Context()
	all, err := d.opts.Store.Repositories(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range all {
		if !p.CanSeeRepo(r) {
			continue
		}
		_, total, err := d.opts.Store.ChartVersionPage(ctx, r.Name, chartctl.ChartFilter{Name: name}, 0, 1)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			continue
		} else if err != nil {
			return nil, err
		}
		if total > 0 {
			out = append(out, r.Name)
		}
	}
	return out, nil
}

func (d *Dashboard) handleDiff(c echo.Context) error {
	p, r, ok, err := d.visibleRepo(c)
	if !ok {
		return err
	}
	ctx := c.Request().Context()
	name := c.Param("name")
	if chart.ValidateName(name) != nil {
		return d.notFound(c)
	}
	versions, err := d.chartVersionList(c, r.Name, name)
	if err != nil {
		return err
	}
	if len(versions) == 0 {
		return d.notFound(c)
	}
	dp := DiffPage{Repo: r, Name: name, ChartURL: chartURL(r.Name, name, ""), Action: chartURL(r.Name, name, "") + "/diff",
		From: strings.TrimSpace(c.QueryParam("from")), To: strings.TrimSpace(c.QueryParam("to")), ToRepo: strings.TrimSpace(c.QueryParam("to_repo")), View: "unified"}
	if c.QueryParam("view") == "split" {
		dp.View = "split"
	}
	if dp.ToRepo == "" {
		dp.ToRepo = r.Name
	}
	if dp.Repos, err = d.reposWithChart(c, p, name); err != nil {
		return err
	}
	status := http.StatusOK
	// The repository of To: one the visitor cannot see, or that has no
	// such chart, is reported as not found, never as forbidden.
	toVersions := versions
	if dp.ToRepo != r.Name {
		toVersions = nil
		if chartctl.ValidateName("repo", dp.ToRepo) == nil {
			if tr, err := d.opts.App.VisibleRepo(ctx, p, dp.ToRepo); err == nil {
				if toVersions, err = d.chartVersionList(c, tr.Name, name); err != nil {
					return err
				}
			} else if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
				return err
			}
		}
		if len(toVersions) == 0 {
			dp.Problem = "There is no chart " + name + " in a repository named " + dp.ToRepo + " that you can see. Pick another repository."
			status = http.StatusNotFound
			dp.ToRepo = r.Name
			toVersions = versions
		}
	}
	if c.QueryParam("fragment") == "to-versions" {
		// The picker's script asks for the versions of another
		// repository's chart when that repository is picked.
		c.Response().Header().Set("X-Diff-Fragment", "1")
		if status != http.StatusOK {
			toVersions = nil
		}
		return d.renderFragment(c, status, "diff", "to-options", d.browsePage(c, "", "", "", DiffPage{To: dp.To, ToVersions: toVersions}))
	}
	// Without versions picked, the page compares the latest version with
	// the one before it: what the last release changed.
	if dp.Problem == "" && dp.From == "" && dp.To == "" {
		latest, _, err := d.latestVersion(ctx, r.Name, name, nil)
		if err != nil {
			return err
		}
		dp.To = latest.Version
		if prev, err := d.previousVersion(c, r.Name, latest, nil); err != nil {
			return err
		} else if prev != nil {
			dp.From = prev.Version
		}
	}
	if dp.Problem == "" {
		for _, v := range []struct{ label, v string }{{"the version to compare from", dp.From}, {"the version to compare to", dp.To}} {
			if v.v == "" {
				dp.Problem = "Pick " + v.label + "."
				if len(versions) == 1 && dp.ToRepo == r.Name {
					dp.Problem = "This chart has one version only: there is nothing to compare it with yet."
				}
				break
			}
			if chart.ValidateVersion(v.v) != nil {
				dp.Problem = fmt.Sprintf("%q is not a chart version (SemVer, such as 1.2.3). Pick %s from the list.", v.v, v.label)
				status = http.StatusBadRequest
				break
			}
		}
	}
	if dp.Problem == "" {
		res, err := d.opts.App.DiffCharts(ctx, p, r.Name, name, dp.From, dp.To, dp.ToRepo)
		switch chartctl.ErrorCode(err) {
		case "":
			dp.Compared = true
			dp.Values = valuesView(res.Values, 0)
			dp.ValuesError = res.ValuesError
			budget := diffPageLines
			for i, f := range res.Files {
				fv := FileView{Path: f.Path, Status: f.Status, Anchor: "file-" + strconv.Itoa(i+1)}
				if !strings.HasPrefix(f.Diff, "--- ") {
					fv.Note = strings.TrimSpace(f.Diff)
				} else {
					fv.Lines, fv.Added, fv.Removed, fv.Truncated = parseUnified(f.Diff, min(diffFileLines, budget))
					budget -= len(fv.Lines)
					if budget <= 0 {
						dp.Truncated = true
					}
					if dp.View == "split" {
						fv.Rows, fv.Lines = splitRows(fv.Lines), nil
					}
				}
				dp.Files = append(dp.Files, fv)
			}
		case chartctl.ENOTFOUND:
			dp.Problem = "One of these versions is not there: " + name + " " + dp.From + " in " + r.Name + ", or " + dp.To + " in " + dp.ToRepo + ". Pick versions from the lists."
			status = http.StatusNotFound
		default:
			return err
		}
	}
	dp.FromVersions = withVersion(versions, dp.From)
	dp.ToVersions = withVersion(toVersions, dp.To)
	dp.UnifiedURL = diffURL(r.Name, name, dp.From, dp.To, dp.ToRepo, "unified")
	dp.SplitURL = diffURL(r.Name, name, dp.From, dp.To, dp.ToRepo, "split")
	if dp.ToRepo == r.Name {
		dp.SwapURL = diffURL(r.Name, name, dp.To, dp.From, "", dp.View)
	} else {
		dp.SwapURL = diffURL(dp.ToRepo, name, dp.To, dp.From, r.Name, dp.View)
	}
	if dp.Compared {
		dp.FromURL, dp.ToURL = chartURL(r.Name, name, dp.From), chartURL(dp.ToRepo, name, dp.To)
		if dp.ToRepo == r.Name {
			// The command compares versions of one repository.
			dp.CLI = "chartctl chart diff " + name + " " + dp.From + " " + dp.To + " --repo " + r.Name
		}
	}
	title := "Compare " + name + " · " + r.Name
	if dp.Compared {
		title = name + " " + dp.From + " → " + dp.To + " · " + r.Name
	}
	return d.render(c, status, "diff", d.browsePage(c, title, "repos", "", dp))
}
