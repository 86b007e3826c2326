// Package purge implements `chartctl repo cache purge`.
package purge

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// PurgeOptions are the inputs of `repo cache purge`.
type PurgeOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Repo    string
	Chart   string
	Version string
}

// NewCmdPurge returns the `repo cache purge` command; runF replaces the
// run function in tests.
func NewCmdPurge(f *cmdutil.Factory, runF func(*PurgeOptions) error) *cobra.Command {
	opts := &PurgeOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "purge REPO [CHART[@VERSION]]",
		Short: "Delete what a proxy repository has cached",
		Long: `Delete the chart versions the proxy repository REPO has cached: all of them,
every version of CHART, or CHART@VERSION. The next pull fetches them from the
upstream again, and the upstream's index is fetched again on the next request.
You need the maintainer role in the repository.`,
		Example: `  chartctl repo cache purge bitnami
  chartctl repo cache purge bitnami nginx
  chartctl repo cache purge bitnami nginx@15.0.1`,
		Args:              cmdutil.RangeArgs(1, 2, "a repository name is required: chartctl repo cache purge REPO [CHART[@VERSION]]"),
		ValidArgsFunction: cmdutil.FirstArgOnly(cmdutil.CompleteRepositories(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Repo = args[0]
			opts.JSON = f.WantsJSON()
			if len(args) == 2 {
				opts.Chart, opts.Version, _ = strings.Cut(args[1], "@")
				if opts.Chart == "" || (strings.Contains(args[1], "@") && opts.Version == "") {
					return cmdutil.FlagErrorf("%q is not CHART or CHART@VERSION", args[1])
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return purgeRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func purgeRun(ctx context.Context, opts *PurgeOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	res, _, err := c.Repositories.PurgeCache(ctx, opts.Repo, opts.Chart, opts.Version)
	if err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("purge the cache of %s: %w", opts.Repo, err), cmdutil.HintRepoList)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, res)
	}
	cs := opts.IO.ColorScheme()
	what := "cached version"
	if len(res.Purged) != 1 {
		what += "s"
	}
	fmt.Fprintf(opts.IO.Out, "%s Purged %d %s from %s\n", cs.SuccessIcon(), len(res.Purged), what, cs.Bold(termtext.Line(opts.Repo)))
	for _, v := range res.Purged {
		fmt.Fprintf(opts.IO.Out, "  %s %s\n", termtext.Line(v.Name), termtext.Line(v.Version))
	}
	return nil
}
