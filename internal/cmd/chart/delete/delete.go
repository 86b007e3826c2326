// Package delete implements `chartctl chart delete`.
package delete

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// DeleteOptions are the inputs of `chart delete`.
type DeleteOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)

	Repo    string
	Name    string
	Version string
	Yes     bool
	// JSON prints the outcome as JSON (-o json, or off a terminal).
	JSON bool
}

// NewCmdDelete returns the `chart delete` command.
func NewCmdDelete(f *cmdutil.Factory, runF func(*DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "delete NAME VERSION --repo REPO",
		Short: "Delete a chart version",
		Long: `Delete one chart version from a repository. On a terminal you are asked
to confirm; elsewhere --yes is required.`,
		Example: `  chartctl chart delete nginx 1.2.3 --repo stable
  chartctl chart delete nginx 1.2.3 --repo stable --yes`,
		Args: cmdutil.ExactArgs(2, "a chart name and a version are required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name, opts.Version = args[0], args[1]
			if opts.Repo == "" {
				return cmdutil.FlagErrorf("--repo is required")
			}
			opts.JSON = f.WantsJSON()
			if err := cmdutil.RequireYes(opts.IO, opts.Yes); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return deleteRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Repo, "repo", "r", "", "repository (required)")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "delete without asking")
	_ = cmd.RegisterFlagCompletionFunc("repo", cmdutil.CompleteRepositories(f))
	return cmd
}

func deleteRun(ctx context.Context, opts *DeleteOptions) error {
	if !opts.Yes {
		what := fmt.Sprintf("chart %s %s from %s", opts.Name, opts.Version, opts.Repo)
		if err := cmdutil.ConfirmByName(ctx, opts.IO, what, opts.Name); err != nil {
			return err
		}
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	if _, err := c.Charts.Delete(ctx, opts.Repo, opts.Name, opts.Version); err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("delete %s %s from %s: %w", opts.Name, opts.Version, opts.Repo, err), cmdutil.HintChartList(opts.Repo))
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, map[string]any{"repository": opts.Repo, "name": opts.Name, "version": opts.Version, "deleted": true})
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Deleted %s %s from %s\n", opts.IO.ColorScheme().SuccessIcon(),
		termtext.Line(opts.Name), termtext.Line(opts.Version), termtext.Line(opts.Repo))
	return err
}
