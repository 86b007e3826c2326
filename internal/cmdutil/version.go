package cmdutil

import (
	"context"
	"fmt"

	"github.com/Masterminds/semver/v3"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
)

// ResolveVersion returns the stored version of chart name in repo that the
// user asked for. With version "" it is the latest by client.Latest, Helm's
// rule: the newest stable version, or with devel the newest of all; a chart
// with only pre-releases has no latest without devel, and the error says
// to use --devel. Otherwise it is version itself or the stored version
// SemVer-equal to it, so --version v1.0.0 finds a stored 1.0.0 as Helm's
// --version does. Unknown charts and versions are the server's 404,
// with the hint to list the repository's charts.
func ResolveVersion(ctx context.Context, c *client.Client, repo, name, version string, devel bool) (string, error) {
	if version != "" {
		ch, _, err := c.Charts.Get(ctx, repo, name, version)
		if err == nil {
			return ch.Version, nil
		}
		notFound := HintNotFound(fmt.Errorf("find %s %s in %s: %w", name, version, repo, err), HintChartList(repo))
		if _, perr := semver.NewVersion(version); !IsNotFound(err) || perr != nil {
			return "", notFound
		}
		// Not stored under that spelling: look for the same SemVer
		// version under another ("1.0.0" for "v1.0.0").
		versions, lerr := versionsOf(ctx, c, repo, name)
		if lerr != nil {
			return "", notFound
		}
		for _, v := range versions {
			if client.SameVersion(v, version) {
				return v, nil
			}
		}
		return "", notFound
	}
	versions, err := versionsOf(ctx, c, repo, name)
	if err != nil {
		return "", HintNotFound(fmt.Errorf("find the latest version of %s: %w", name, err), HintChartList(repo))
	}
	if len(versions) == 0 {
		return "", fmt.Errorf("chart %s has no versions in %s", name, repo)
	}
	if v, ok := client.Latest(versions, devel); ok {
		return v, nil
	}
	newest, _ := client.Latest(versions, true)
	if newest == "" {
		return "", fmt.Errorf("chart %s in %s has no SemVer version to take as the latest: give one with --version", name, repo)
	}
	return "", fmt.Errorf("chart %s in %s has only pre-release versions (the newest is %s), and the latest is the newest stable one: add --devel to take pre-releases, or give --version %s",
		termtext.Line(name), repo, termtext.Line(newest), termtext.Line(newest))
}

// versionsOf lists every stored version of chart name in repo.
func versionsOf(ctx context.Context, c *client.Client, repo, name string) ([]string, error) {
	var out []string
	for ch, err := range c.Charts.AllVersions(ctx, repo, name) {
		if err != nil {
			return nil, err
		}
		out = append(out, ch.Version)
	}
	return out, nil
}
