// Package delete implements `chartctl webhook delete`.
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

// DeleteOptions are the inputs of `webhook delete`.
type DeleteOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)

	ID  string
	Yes bool
	// JSON prints the outcome as JSON (-o json, or off a terminal).
	JSON bool
}

// NewCmdDelete returns the `webhook delete` command.
func NewCmdDelete(f *cmdutil.Factory, runF func(*DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a webhook and its delivery history",
		Example: `  chartctl webhook delete wh_01JD8X2Q3R4S5T6V7W8X9Y0Z1A
  chartctl webhook delete wh_01JD8X2Q3R4S5T6V7W8X9Y0Z1A --yes`,
		Args: cmdutil.ExactArgs(1, "a webhook id is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
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
		if err := cmdutil.Confirm(ctx, opts.IO, fmt.Sprintf("Delete webhook %s? Pending deliveries are dropped.", termtext.Line(opts.ID)), "Not deleted"); err != nil {
			return err
		}
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	if _, err := c.Webhooks.Delete(ctx, opts.ID); err != nil {
		return fmt.Errorf("delete webhook %s: %w", opts.ID, err)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, map[string]any{"id": opts.ID, "deleted": true})
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Deleted webhook %s\n", opts.IO.ColorScheme().SuccessIcon(), termtext.Line(opts.ID))
	return err
}
