// Package delete implements `chartctl replication delete`.
package delete

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmd/replication/status"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// DeleteOptions are the inputs of `replication delete`.
type DeleteOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name string
	Yes  bool
}

// NewCmdDelete returns the `replication delete` command; runF replaces
// the run function in tests.
func NewCmdDelete(f *cmdutil.Factory, runF func(*DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "delete NAME [--yes]",
		Short: "Delete a replication and what it had still to copy",
		Long: `Delete a replication with its pending copies. What was already copied
stays at the target. On a terminal you are asked to type the
replication's name; elsewhere --yes is required.`,
		Example: `  chartctl replication delete acme-dr
  chartctl replication delete acme-dr --yes`,
		Args:              cmdutil.ExactArgs(1, "a replication name is required"),
		ValidArgsFunction: cmdutil.FirstArgOnly(cmdutil.CompleteReplications(f)),
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
		if err := cmdutil.ConfirmByName(ctx, opts.IO, "replication "+opts.Name, opts.Name); err != nil {
			return err
		}
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	if _, err := c.Replications.Delete(ctx, opts.Name); err != nil {
		return cmdutil.HintNotFound(fmt.Errorf("delete replication %s: %w", opts.Name, err), status.HintList)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, map[string]any{"name": opts.Name, "deleted": true})
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Deleted replication %s\n", opts.IO.ColorScheme().SuccessIcon(), termtext.Line(opts.Name))
	return err
}
