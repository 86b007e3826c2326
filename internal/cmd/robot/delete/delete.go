// Package delete implements `chartctl robot delete`.
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

// DeleteOptions are the inputs of `robot delete`.
type DeleteOptions struct {
	IO     *iostreams.IOStreams
	Client func() (*client.Client, error)
	JSON   bool

	Name         string
	Organization string
	Yes          bool
}

// NewCmdDelete returns the `robot delete` command; runF replaces the run
// function in tests.
func NewCmdDelete(f *cmdutil.Factory, runF func(*DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{IO: f.IOStreams, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "delete NAME --org ORG [--yes]",
		Short: "Delete a robot account; its secret stops at once",
		Long: `Delete a robot account with its trusted publishers. Its secret and the
credentials exchanged for it stop at once. On a terminal you are asked to
type the robot's name; elsewhere --yes is required. To stop it for a while
instead, use ` + "`chartctl robot disable`" + `.`,
		Example: `  chartctl robot delete ci-push --org acme
  chartctl robot delete ci-push --org acme --yes`,
		Args: cmdutil.ExactArgs(1, "a robot name is required"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.JSON = f.WantsJSON()
			if opts.Organization == "" {
				return cmdutil.FlagErrorf("--org is required: robots belong to an organization")
			}
			if err := cmdutil.RequireYes(opts.IO, opts.Yes); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return deleteRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Organization, "org", "", "organization of the robot (required)")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "delete without asking")
	_ = cmd.RegisterFlagCompletionFunc("org", cmdutil.CompleteOrganizations(f))
	return cmd
}

func deleteRun(ctx context.Context, opts *DeleteOptions) error {
	if !opts.Yes {
		if err := cmdutil.ConfirmByName(ctx, opts.IO, "robot "+opts.Name+" of "+opts.Organization, opts.Name); err != nil {
			return err
		}
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	if _, err := c.Robots.Delete(ctx, opts.Organization, opts.Name); err != nil {
		hint := "To see the robots of " + opts.Organization + ", run: chartctl robot list --org " + opts.Organization
		return cmdutil.HintNotFound(fmt.Errorf("delete robot %s in %s: %w", opts.Name, opts.Organization, err), hint)
	}
	if opts.JSON {
		return cmdutil.PrintJSON(opts.IO.Out, map[string]any{"organization": opts.Organization, "name": opts.Name, "deleted": true})
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s Deleted robot %s of %s\n", opts.IO.ColorScheme().SuccessIcon(),
		termtext.Line(opts.Name), termtext.Line(opts.Organization))
	return err
}
