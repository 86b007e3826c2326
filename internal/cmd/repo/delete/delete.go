// Package delete implements `chartctl repo delete`.
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

// DeleteOptions are the inputs of `repo delete`.
type DeleteOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)

	Name string
	Yes  bool
	// JSON prints the outcome as JSON (-o json, or off a terminal).
	JSON bool
}

// NewCmdDelete returns the `repo delete` command.
func NewCmdDelete(f *cmdutil.Factory, runF func(*DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a repository and all its charts",
		Long: `Delete a repository and all its charts. On a terminal you are asked to
type the repository's name; elsewhere --yes is required.`,
		Example: `  chartctl repo delete old-charts
  chartctl repo delete old-charts --yes`,
		Args:              cmdutil.ExactArgs(1, "a repository name is required"),
		ValidArgsFunction: cmdutil.FirstArgOnly(cmdutil.CompleteRepositories(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
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
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "delete without asking")
	return cmd
}

func deleteRun(ctx context.Context, opts *DeleteOptions) error {
	if !opts.Yes {
		if err := cmdutil.ConfirmByName(ctx, opts.IO, "repository "+opts.Name+" and all its charts", opts.Name); err != nil {
			return err
		}
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	if _, err := c.Repositories.Delete(ctx, opts.Name); err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("delete repository %s: %w", opts.Name, err), cmdutil.HintRepoList)
	}
	cs := opts.IO.ColorScheme()
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, map[string]any{"name": opts.Name, "deleted": true})
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Deleted repository %s\n", cs.SuccessIcon(), termtext.Line(opts.Name))
	return err
}
